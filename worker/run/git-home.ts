// The empty HOME git runs with, so no ~/.gitconfig of the worker or the agent reaches it.
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, type Stats } from 'node:fs'
import { join } from 'node:path'

// One directory per uid, reused by every process of that uid: a per-process directory would be left
// behind by every process that ends without an exit event (killed test workers, crashed workers).
// It is used only while it is provably ours and empty — owned by this uid, mode 0700, a real directory —
// otherwise a private directory is made for this process.
export function scratchHomeIn(parent: string): string {
  // without getuid (not POSIX) nothing is provably ours: every process makes its own
  const uid = process.getuid?.()
  const shared = join(parent, `preflight-git-home-${uid}`)
  try {
    mkdirSync(shared, { mode: 0o700 })
  } catch {
    // there already, or it cannot be made: either way it is used only if it passes the test below
  }
  return isOursAndEmpty(shared, uid) ? shared : privateHome(parent)
}

function isOursAndEmpty(dir: string, uid: number | undefined): boolean {
  let info: Stats
  try {
    info = lstatSync(dir)
  } catch {
    // cannot be looked at: not provably ours (and a private directory there will fail the same way)
    return false
  }
  const ours = info.isDirectory() && info.uid === uid && (info.mode & 0o077) === 0
  return ours && readdirSync(dir).length === 0
}

function privateHome(parent: string): string {
  const dir = mkdtempSync(join(parent, 'preflight-git-home-'))
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }))
  return dir
}
