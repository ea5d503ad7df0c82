// A lock file holding its owner's pid: taken with O_EXCL, taken over only when that process is gone.
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs'
import { dirname } from 'node:path'

// Returns the release function, or the pid of the live process that holds the lock.
export function takePidLock(file: string): (() => void) | { heldBy: number } {
  mkdirSync(dirname(file), { recursive: true })
  for (let tries = 0; tries < 2; tries++) {
    try {
      const fd = openSync(file, 'wx')
      writeSync(fd, String(process.pid))
      closeSync(fd)
      return () => rmSync(file, { force: true })
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
      const holder = Number(readFileSync(file, 'utf8'))
      if (alive(holder)) return { heldBy: holder }
      rmSync(file, { force: true })
    }
  }
  throw new Error(`could not lock ${file}`)
}

// Whether a process with this pid exists (EPERM: it does, as another user's).
export function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}
