// How the worker finds its own programs (git at start): the file of that name in one directory, when it
// is a regular file (links followed) this process may execute. The exec check judges for the agent and
// says why a candidate did not count (checks/resolve.ts); this one only answers where, or nothing.
import { accessSync, constants, type Stats, statSync } from 'node:fs'
import { join } from 'node:path'
import { isMissing } from './paths.js'

// An error other than a miss or a refusal (EIO…) is thrown, never read as "not there".
export function executableIn(dir: string, name: string): string | undefined {
  const path = join(dir, name)
  let info: Stats | undefined
  try {
    info = statSync(path, { throwIfNoEntry: false })
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'EACCES' || code === 'EPERM' || isMissing(err)) return undefined
    throw err
  }
  if (!info?.isFile()) return undefined
  try {
    accessSync(path, constants.X_OK)
  } catch {
    return undefined
  }
  return path
}
