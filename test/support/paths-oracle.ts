// An oracle for `paths`, written from docs/requirements.md ("paths") alone on top of picomatch's isMatch:
// no pruning, no static prefix, no shared code with worker/checks — a naive walk of the whole tree by bytes,
// names spelled as the section says, then the documented rules. The differential test holds checkPaths to it.
import { lstatSync, readdirSync, realpathSync, statSync } from 'node:fs'
import { join } from 'node:path'
import picomatch from 'picomatch'
import { textOf } from './paths-trees.js'

const OPTIONS = { dot: true, posix: true, windows: false }

export type Why = 'symlink-escapes-workspace' | 'dangling-symlink'

export interface OracleVerdict {
  // every entry that counts as a match; met when there is one
  matches: Set<string>
  // matching entries that do not count, and why
  rejected: Map<string, Why>
}

export interface Seen {
  path: string
  // undefined when it counts
  why?: Why
  isDir: boolean
}

// What a walk from the workspace sees, by whether the pattern names node_modules: the same for every
// pattern on one tree, so a caller may keep it across patterns.
export type WalkMemo = Map<boolean, Seen[]>

export function oracle(workspace: string, input: string, memo: WalkMemo = new Map()): OracleVerdict {
  // Grammar: one leading "./" dropped; a trailing "/" means "a directory" and is dropped
  let pattern = input.startsWith('./') ? input.slice(2) : input
  const dirOnly = pattern.endsWith('/')
  if (dirOnly) pattern = pattern.slice(0, -1)
  const realRoot = realpathSync(workspace)
  if (!/[*?[\]{}()|$^+"]/.test(pattern)) return literal(workspace, realRoot, pattern, dirOnly)
  // a last `**` stands for one segment or more
  const read = pattern.split('/').at(-1) === '**' ? `${pattern}/*` : pattern
  // picomatch's matcher, exact-string rule included, for the pattern as written; never a negation
  const picomatchAccepts = picomatch(read, OPTIONS, true)
  if (picomatchAccepts.state?.negated)
    throw new Error(`picomatch reads ${JSON.stringify(input)} as a negation`)
  const isMatch = (path: string) => path === pattern || picomatchAccepts(path)
  const namesNodeModules = pattern.split('/').includes('node_modules')
  let everything = memo.get(namesNodeModules)
  if (!everything) {
    everything = seeEverything(workspace, realRoot, namesNodeModules)
    memo.set(namesNodeModules, everything)
  }
  const verdict: OracleVerdict = { matches: new Set(), rejected: new Map() }
  for (const seen of everything) {
    if (!isMatch(seen.path)) continue
    if (seen.why) verdict.rejected.set(seen.path, seen.why)
    else if (seen.isDir || !dirOnly) verdict.matches.add(seen.path)
  }
  return verdict
}

// A literal: the one path, links followed; no walk rules.
function literal(workspace: string, realRoot: string, path: string, dirOnly: boolean): OracleVerdict {
  const verdict: OracleVerdict = { matches: new Set(), rejected: new Map() }
  const abs = join(workspace, path)
  try {
    lstatSync(abs)
  } catch {
    return verdict
  }
  let real: string
  try {
    real = realpathSync.native(abs, { encoding: 'buffer' }).toString('latin1')
  } catch {
    verdict.rejected.set(path, 'dangling-symlink')
    return verdict
  }
  if (!inside(real, Buffer.from(realRoot).toString('latin1')))
    verdict.rejected.set(path, 'symlink-escapes-workspace')
  else if (!dirOnly || statSync(abs).isDirectory()) verdict.matches.add(path)
  return verdict
}

// Every entry a glob's walk sees, by the walk rules, from the workspace down: listed through the path as
// the bytes are (the kernel follows the links), judged on real paths, also bytes (realpathSync.native:
// the JavaScript realpathSync reads a Buffer path as UTF-8 text); matched as spelled.
function seeEverything(workspace: string, realRoot: string, namesNodeModules: boolean): Seen[] {
  const seen: Seen[] = []
  // bytes read as Latin-1: one character a byte, so that paths compare and split as their bytes do
  const root = Buffer.from(realRoot).toString('latin1')
  const visit = (dir: Buffer, path: string, onPath: string[]) => {
    for (const bytes of readdirSync(dir, { encoding: 'buffer' })) {
      const name = textOf(bytes)
      if (name === '.git' || (name === 'node_modules' && !namesNodeModules)) continue
      const child = path === '' ? name : `${path}/${name}`
      const abs = Buffer.concat([dir, Buffer.from('/'), bytes])
      let real: string
      try {
        real = realpathSync.native(abs, { encoding: 'buffer' }).toString('latin1')
      } catch {
        seen.push({ path: child, why: 'dangling-symlink', isDir: false })
        continue
      }
      if (!inside(real, root)) {
        seen.push({ path: child, why: 'symlink-escapes-workspace', isDir: false })
        continue
      }
      const segments = real.slice(root.length).split('/')
      if (segments.includes('.git') || (!namesNodeModules && segments.includes('node_modules'))) continue
      const isDir = statSync(abs).isDirectory()
      seen.push({ path: child, isDir })
      if (isDir && !onPath.includes(real)) visit(abs, child, [...onPath, real])
    }
  }
  visit(Buffer.from(workspace), '', [root])
  return seen
}

function inside(path: string, root: string): boolean {
  return path === root || path.startsWith(`${root}/`)
}
