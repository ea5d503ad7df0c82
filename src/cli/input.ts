// What a command reads from the user: a small regular file, or stdin for "-" (`subagents apply -f -`).
import { readFileSync, statSync } from 'node:fs'
import { UsageError } from './errors.js'

// An input is small: anything else (a device, a FIFO, /dev/zero, a huge file) is refused before it is read.
export const MAX_INPUT_BYTES = 1024 * 1024

export function readSmallFile(file: string): string {
  try {
    const info = statSync(file)
    if (!info.isFile()) throw new UsageError(`${file} is not a regular file`)
    if (info.size > MAX_INPUT_BYTES) throw new UsageError(`${file} is larger than 1 MiB`)
    return readFileSync(file, 'utf8')
  } catch (err) {
    if (err instanceof UsageError) throw err
    throw new UsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`)
  }
}

// The file's text, or all of stdin for "-" (at most MAX_INPUT_BYTES of it).
export async function readInput(file: string, stdin: AsyncIterable<Buffer> = process.stdin): Promise<string> {
  if (file !== '-') return readSmallFile(file)
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of stdin) {
    size += chunk.length
    if (size > MAX_INPUT_BYTES) throw new UsageError('stdin holds more than 1 MiB')
    chunks.push(chunk)
  }
  return Buffer.concat(chunks).toString('utf8')
}
