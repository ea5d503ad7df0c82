// Real temp workspaces, real files, real git for the check tests. Directories here are the test's own
// (testDir: removed after it); git and long-lived directories are the worker's fixtures (git-fixtures.ts).
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import type { ContextRequires } from '../../src/contract/index.js'
import { type CheckContext, evaluationContext } from '../../worker/checks/index.js'
import { commitAll } from './git-fixtures.js'

const made: string[] = []

// After each test (test/support/per-file.ts): the directories testDir made.
export function removeTestDirs(): void {
  for (const dir of made.splice(0).reverse()) rmSync(dir, { recursive: true, force: true })
}

// A fresh directory (real path, so tests can compare observed paths), removed after the test.
export function testDir(prefix = 'preflight-test-'): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)))
  made.push(dir)
  return dir
}

// A fresh directory that any uid may search (mkdtemp makes it 0700), for checks run as another uid.
export function sharedDir(prefix = 'preflight-test-'): string {
  const dir = testDir(prefix)
  chmodSync(dir, 0o755)
  return dir
}

export function write(root: string, rel: string, body = 'x\n', mode = 0o644): string {
  const file = join(root, rel)
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, body)
  chmodSync(file, mode)
  return file
}

export function link(root: string, rel: string, target: string): void {
  mkdirSync(dirname(join(root, rel)), { recursive: true })
  symlinkSync(target, join(root, rel))
}

export function repoWithCommit(dir = testDir()): string {
  write(dir, 'README.md')
  commitAll(dir, 'first')
  return dir
}

export function context(
  workspace: string,
  requires: ContextRequires = {},
  extra: Partial<Omit<CheckContext, 'listings' | 'memo'>> = {},
): CheckContext {
  return {
    ...evaluationContext(requires, { workspace, env: { PATH: process.env.PATH ?? '' } }),
    signal: new AbortController().signal,
    ...extra,
  }
}

// How many turns of the event loop pass while `work` runs: work that never hands the loop back takes none.
export async function turnsWhile(work: unknown): Promise<number> {
  let turns = 0
  let done = false
  const tick = () => {
    if (done) return
    turns++
    setImmediate(tick)
  }
  setImmediate(tick)
  try {
    await work
  } finally {
    done = true
  }
  return turns
}
