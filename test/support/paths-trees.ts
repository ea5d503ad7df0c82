// Generated workspaces for the differential test of `paths`: trees of files, directories, dot-entries, FIFOs
// and symlinks (inside, escaping, dangling, looping, into .git and node_modules), names with glob
// characters, non-ASCII and not UTF-8. The patterns run on them: paths-patterns.ts.
import { isUtf8 } from 'node:buffer'
import { linkSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import fc from 'fast-check'

// Names that are not UTF-8, spelled as docs/requirements.md reads them (a byte over 127 as U+DC00 + it): a
// lone byte, Latin-1 "été", a lead byte alone, a surrogate encoded in UTF-8. And U+FFFD, which such a name
// reads as in a string.
const BYTE_NAMES = ['x\uDCFF', '\uDCE9t\uDCE9', 'a\uDCC3', '\uDCED\uDCA0\uDC80.ts', 'x\uFFFD'] as const

// Names a segment may have: plain, dotted, the two the walk rules name, glob characters, non-ASCII, bytes.
export const NAMES = [
  'a',
  'b',
  'src',
  'x.ts',
  'y.md',
  'pkg181',
  'pxg181',
  '.hidden',
  '.github',
  '.git',
  'node_modules',
  'empty-dir',
  'a(b).txt',
  'p+q',
  'e@f',
  'g!h',
  '[x]',
  '{y}',
  'c,d',
  '**',
  '*',
  '?',
  'é',
  'ünï.ts',
  '日本',
  'a b',
  'a|b',
  '$',
  '$$',
  'x)+',
  '"q"',
  'HEAD',
  'package.json',
  ...BYTE_NAMES,
] as const

export type Target =
  | { to: 'node'; index: number }
  | { to: 'up'; levels: number }
  | { to: 'outside'; sub: 'root' | 'a.ts' | 'd' | 'back' }
  | { to: 'dangling' }
  | { to: 'self' }
  | { to: 'special'; which: '.git' | '.git/refs' | 'node_modules' | 'node_modules/pkg' }

export type TreeNode =
  | { kind: 'file' | 'dir' | 'fifo'; path: string[] }
  | { kind: 'link'; path: string[]; target: Target }

export interface Tree {
  // .git/HEAD, .git/refs/heads/main, node_modules/pkg/package.json, node_modules/.bin/x
  skeleton: boolean
  nodes: TreeNode[]
}

// mostly a few short names, so that paths share directories and links lead somewhere
const name = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom('a', 'b', 'src') },
  { weight: 3, arbitrary: fc.constantFrom(...NAMES) },
  // more often than among NAMES: a directory of such a name on the way to a match
  { weight: 1, arbitrary: fc.constantFrom(...BYTE_NAMES) },
)
const segments = fc.array(name, { minLength: 1, maxLength: 4 })

const target: fc.Arbitrary<Target> = fc.oneof(
  fc.record({ to: fc.constant('node' as const), index: fc.nat(40) }),
  fc.record({ to: fc.constant('up' as const), levels: fc.nat(3) }),
  fc.record({ to: fc.constant('outside' as const), sub: fc.constantFrom('root', 'a.ts', 'd', 'back') }),
  fc.record({ to: fc.constant('dangling' as const) }),
  fc.record({ to: fc.constant('self' as const) }),
  fc.record({
    to: fc.constant('special' as const),
    which: fc.constantFrom('.git', '.git/refs', 'node_modules', 'node_modules/pkg'),
  }),
)

const treeNode: fc.Arbitrary<TreeNode> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('file' as const), path: segments }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('dir' as const), path: segments }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('fifo' as const), path: segments }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('link' as const), path: segments, target }) },
)

export const tree: fc.Arbitrary<Tree> = fc.record({
  skeleton: fc.boolean(),
  nodes: fc.array(treeNode, { minLength: 1, maxLength: 14 }),
})

// A path as the file system has it: each byte spelled U+DC00 + the byte back to that byte, the rest UTF-8.
export function bytesOf(path: string): Buffer {
  return Buffer.concat(
    path
      .split(/((?<![\uD800-\uDBFF])[\uDC80-\uDCFF])/)
      .map((part, i) => (i % 2 ? Buffer.of(part.charCodeAt(0) - 0xdc00) : Buffer.from(part))),
  )
}

// A name as docs/requirements.md spells it: its text when it is UTF-8, else byte by byte.
export function textOf(name: Buffer): string {
  if (isUtf8(name)) return name.toString()
  return String.fromCharCode(...Array.from(name, (b) => (b < 0x80 ? b : 0xdc00 + b)))
}

// Paths into the built tree, links followed with no loop check (a loop is walked round a few times), up
// to a few segments deep: the spellings a pattern through links and loops can take. Not the oracle's walk.
export function pathsThrough(workspace: string, depth = 5, limit = 400): string[][] {
  const found: string[][] = []
  const queue: string[][] = [[]]
  for (let at = queue.shift(); at && found.length < limit; at = queue.shift()) {
    let names: string[] = []
    try {
      names = readdirSync(bytesOf(join(workspace, ...at)), { encoding: 'buffer' }).map(textOf)
    } catch {
      // not a directory, or a link that leads nowhere
    }
    for (const name of names) {
      found.push([...at, name])
      if (at.length + 1 < depth) queue.push([...at, name])
    }
  }
  return found
}

// Fixed files outside the workspace that escaping links lead to; `back` leads into the workspace again.
function writeOutside(outside: string, workspace: string): void {
  mkdirSync(join(outside, 'd'), { recursive: true })
  writeFileSync(join(outside, 'a.ts'), 'x\n')
  writeFileSync(join(outside, 'd/b.md'), 'x\n')
  symlinkSync(workspace, join(outside, 'back'))
}

// Writes the tree under `root` (root/ws, root/outside) and returns the workspace. Directories first, then
// files and FIFOs (hard links to `fifo`, a FIFO on the same file system), links last: nothing is ever
// created through a link, so a link leading out of `root` cannot make the build write there. A node that
// cannot be created where an earlier one stands is left out: the tree on disk is the case.
export function buildTree(root: string, t: Tree, fifo: string): string {
  const workspace = join(root, 'ws')
  const outside = join(root, 'outside')
  mkdirSync(workspace)
  writeOutside(outside, workspace)
  const nodes: TreeNode[] = t.skeleton
    ? [
        { kind: 'file', path: ['.git', 'HEAD'] },
        { kind: 'file', path: ['.git', 'refs', 'heads', 'main'] },
        { kind: 'file', path: ['node_modules', 'pkg', 'package.json'] },
        {
          kind: 'link',
          path: ['node_modules', '.bin', 'x'],
          target: { to: 'special', which: 'node_modules/pkg' },
        },
        ...t.nodes,
      ]
    : t.nodes
  const quietly = (make: () => void) => {
    try {
      make()
    } catch {
      // occupied by an earlier node: left out
    }
  }
  for (const node of nodes) {
    const at = join(workspace, ...node.path)
    quietly(() => mkdirSync(bytesOf(node.kind === 'dir' ? at : dirname(at)), { recursive: true }))
  }
  for (const node of nodes) {
    const at = bytesOf(join(workspace, ...node.path))
    if (node.kind === 'file') quietly(() => writeFileSync(at, 'x\n', { flag: 'wx' }))
    if (node.kind === 'fifo') quietly(() => linkSync(fifo, at))
  }
  for (const node of nodes) {
    if (node.kind !== 'link') continue
    const at = join(workspace, ...node.path)
    quietly(() => symlinkSync(bytesOf(linkText(node, nodes, workspace, outside)), bytesOf(at)))
  }
  return workspace
}

function linkText(node: TreeNode & { kind: 'link' }, nodes: TreeNode[], workspace: string, outside: string) {
  const from = dirname(join(workspace, ...node.path))
  const t = node.target
  switch (t.to) {
    case 'node':
      return relative(from, join(workspace, ...(nodes[t.index % nodes.length]?.path ?? []))) || '.'
    case 'up':
      // at most up to root/: a link may leave the workspace, never the test's directory
      return Array.from({ length: Math.min(t.levels, node.path.length) }, () => '..').join('/') || '.'
    case 'outside':
      return t.sub === 'root' ? outside : join(outside, t.sub)
    case 'dangling':
      return 'nowhere/at/all'
    case 'self':
      return node.path.at(-1) ?? 'self'
    case 'special':
      return relative(from, join(workspace, t.which)) || '.'
  }
}
