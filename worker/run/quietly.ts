// Runs a program to its end, reading nothing of it but the start of what it says on stderr.
import { type SpawnOptions, spawn } from 'node:child_process'

// Its exit code (null when a signal ended it) and its first complaints; rejects when it could not start.
// From `/` with an empty environment unless `options` say otherwise.
export function runQuietly(
  bin: string,
  args: readonly string[],
  options: SpawnOptions = {},
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { cwd: '/', env: {}, ...options, stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr?.setEncoding('utf8').on('data', (text: string) => {
      // enough to say why; a million complaints must not fill memory
      if (stderr.length < 4_096) stderr += text
    })
    child.once('error', reject)
    child.once('close', (code) => resolve({ code, stderr }))
  })
}
