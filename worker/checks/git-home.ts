// The empty HOME git runs with, so no ~/.gitconfig of the worker or the agent reaches it.
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

let scratchHome: string | undefined

export function gitHome(): string {
  scratchHome ??= scratchHomeIn(tmpdir())
  return scratchHome
}

// One directory per uid, reused by every process of that uid: a per-process directory would be left
// behind by every process that ends without an exit event (killed test workers, crashed workers).
// It is used only while it is provably ours and empty — owned by this uid, mode 0700, a real directory —
// otherwise a private directory is made for this process.
export function scratchHomeIn(parent: string): string {
  const uid = process.getuid?.()
  const shared = join(parent, `preflight-git-home-${uid ?? 'user'}`)
  try {
    mkdirSync(shared, { mode: 0o700 })
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') return privateHome(parent)
  }
  return isOursAndEmpty(shared, uid) ? shared : privateHome(parent)
}

function isOursAndEmpty(dir: string, uid: number | undefined): boolean {
  try {
    const info = lstatSync(dir)
    const ours = info.isDirectory() && (uid === undefined || info.uid === uid) && (info.mode & 0o077) === 0
    return ours && readdirSync(dir).length === 0
  } catch {
    return false
  }
}

function privateHome(parent: string): string {
  const dir = mkdtempSync(join(parent, 'preflight-git-home-'))
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }))
  return dir
}
