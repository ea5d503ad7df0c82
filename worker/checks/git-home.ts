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
  // Stryker disable next-line OptionalChaining: equivalent where the worker runs, every POSIX platform has getuid
  const uid = process.getuid?.()
  // Stryker disable next-line LogicalOperator,StringLiteral: equivalent on POSIX, the fallback names it elsewhere
  const shared = join(parent, `preflight-git-home-${uid ?? 'user'}`)
  try {
    mkdirSync(shared, { mode: 0o700 })
  } catch {
    // there already, or it cannot be made: either way it is used only if it passes the test below
  }
  return isOursAndEmpty(shared, uid) ? shared : privateHome(parent)
}

function isOursAndEmpty(dir: string, uid: number | undefined): boolean {
  try {
    const info = lstatSync(dir)
    // Stryker disable next-line ConditionalExpression,LogicalOperator: isDirectory() is a second lock: a link's mode is 0777 and readdir refuses a file
    const ours = info.isDirectory() && (uid === undefined || info.uid === uid) && (info.mode & 0o077) === 0
    return ours && readdirSync(dir).length === 0
  } catch {
    return false
  }
}

function privateHome(parent: string): string {
  const dir = mkdtempSync(join(parent, 'preflight-git-home-'))
  // Stryker disable next-line all: runs at exit, which no in-process test sees; a child process shows it (git-env.test.ts)
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }))
  return dir
}
