// The walk's rules on their own: containment, what is hidden by real path, loops, the bound on what is read
// and listed, and the turns it hands back to the event loop.
import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { checkPaths } from '../../../worker/checks/paths.js'
import { type GlobPlan, planPattern } from '../../../worker/checks/pattern.js'
import { Turns } from '../../../worker/checks/turns.js'
import {
  childPath,
  hiddenByRealPath,
  MAX_REJECTED,
  repeats,
  rootFrame,
  walkGlob,
} from '../../../worker/checks/walk.js'
import { context, link, testDir, turnsWhile, write } from '../../support/checks.js'

const glob = (pattern: string) => planPattern(pattern) as GlobPlan

describe('childPath', () => {
  it('joins a name to a directory with one "/", the file system root included', () => {
    expect(childPath('/', 'a')).toBe('/a')
    expect(childPath('/ws', 'a')).toBe('/ws/a')
  })
})

describe('hiddenByRealPath', () => {
  it('reads only the segments below the workspace, whatever the workspace is called', () => {
    const plain = glob('**/x')
    expect(hiddenByRealPath('/tmp/node_modules/ws/a', '/tmp/node_modules/ws', plain)).toBe(false)
    expect(hiddenByRealPath('/srv/.git/ws/a', '/srv/.git/ws', plain)).toBe(false)
    expect(hiddenByRealPath('/srv/.git/ws', '/srv/.git/ws', plain)).toBe(false)
  })

  it('hides .git and node_modules below the workspace, also when the workspace is "/"', () => {
    const plain = glob('**/x')
    expect(hiddenByRealPath('/ws/a/.git/b', '/ws', plain)).toBe(true)
    expect(hiddenByRealPath('/ws/node_modules', '/ws', plain)).toBe(true)
    expect(hiddenByRealPath('/.git', '/', plain)).toBe(true)
    expect(hiddenByRealPath('/node_modules/a', '/', plain)).toBe(true)
    expect(hiddenByRealPath('/a/b', '/', plain)).toBe(false)
  })

  it('shows node_modules, never .git, to a pattern that names node_modules', () => {
    const named = glob('node_modules/*/x')
    expect(hiddenByRealPath('/ws/node_modules/a', '/ws', named)).toBe(false)
    expect(hiddenByRealPath('/ws/node_modules/a/.git', '/ws', named)).toBe(true)
  })
})

describe('repeats', () => {
  it('finds a real path on the frame itself or any frame above it, no other', () => {
    const root = rootFrame('/ws')
    const a = { rel: 'a', real: '/ws/a', depth: 1, parent: root, linked: false }
    const b = { rel: 'a/b', real: '/ws/a/b', depth: 2, parent: a, linked: true }
    expect([repeats(b, '/ws/a/b'), repeats(b, '/ws/a'), repeats(b, '/ws')]).toEqual([true, true, true])
    expect([repeats(b, '/ws/c'), repeats(a, '/ws/a/b')]).toEqual([false, false])
  })
})

describe('the walk', () => {
  it('lists at most 20 rejected entries', async () => {
    const ws = testDir()
    for (let i = 0; i < MAX_REJECTED + 5; i++) link(ws, `gen/f${i}.ts`, `../nowhere${i}`)
    const finding = await checkPaths('gen/*.ts', context(ws))
    expect(finding).toMatchObject({ status: 'unmet', reason: 'no-match' })
    expect(finding.observed.rejected).toHaveLength(MAX_REJECTED)
  })

  it('lists a dangling link only where it matches', async () => {
    const ws = testDir()
    link(ws, 'src/gone', '../nowhere')
    write(ws, 'src/readme.md')
    expect(await checkPaths('src/**/*.ts', context(ws))).toEqual({
      status: 'unmet',
      reason: 'no-match',
      observed: { entriesScanned: 2, rejected: [] },
    })
  })

  it('reads exactly as many entries as its bound allows without stopping', async () => {
    const ws = testDir()
    for (let i = 0; i < 4; i++) write(ws, `a/f${i}.txt`)
    write(ws, 'a/b/target.ts')
    // a/ holds 5 entries, a/b/ one: 6 in all
    expect(await checkPaths('a/**/*.ts', context(ws, {}, { maxEntries: 6 }))).toEqual({
      status: 'met',
      observed: { match: 'a/b/target.ts' },
    })
    expect(await checkPaths('a/**/*.ts', context(ws, {}, { maxEntries: 5 }))).toMatchObject({
      status: 'error',
      reason: 'walk-limit',
    })
  })

  // a link to a directory that is not on the walk's path, holding a directory that is: the real directory
  // is reached again without a link of its own, and only the link followed above says it may repeat
  it('does not enter a directory on its own path reached through a plain directory below a link', async () => {
    const ws = testDir()
    mkdirSync(join(ws, 'a'))
    link(ws, 'a/l1', '../b/c')
    link(ws, 'b/c/l2', '..')
    expect(await checkPaths('a/*/*/*/*', context(ws))).toMatchObject({ status: 'unmet' })
    expect(await checkPaths('a/*/*/*', context(ws))).toEqual({
      status: 'met',
      observed: { match: 'a/l1/l2/c' },
    })
  })

  it('does not enter a directory on its own path below a symlinked static prefix', async () => {
    const ws = testDir()
    link(ws, 'l', 'b/c')
    link(ws, 'b/c/l2', '..')
    expect(await checkPaths('l/l2/*/*', context(ws))).toMatchObject({ status: 'unmet' })
    expect(await checkPaths('l/l2/*', context(ws))).toEqual({ status: 'met', observed: { match: 'l/l2/c' } })
  })

  // the walk is synchronous between its turns: without them a timeout could not stop it
  it('hands the event loop back while it walks, so that a timeout stops it', async () => {
    const ws = testDir()
    // 2 links per level, 14 levels: 2^14 paths to walk from 44 entries
    for (let level = 0; level < 14; level++) {
      link(ws, `d${level}/a`, `../d${level + 1}`)
      link(ws, `d${level}/b`, `../d${level + 1}`)
    }
    mkdirSync(join(ws, 'd14'))
    const controller = new AbortController()
    // runs once the walk has started and given back its first turn
    setImmediate(() => setImmediate(() => controller.abort()))
    const finding = await checkPaths('d0/**/nothing', context(ws, {}, { signal: controller.signal }))
    expect(finding).toMatchObject({ status: 'error', reason: 'timeout' })
  })
})

describe('walkGlob', () => {
  // a listing read between turns rejects once the check is told to stop: the walk stopped, not a fault
  it('stops at its next turn while it reads a big directory: timeout, never a throw', async () => {
    const ws = testDir()
    // 1,000 entries, more than 8 KiB: read between turns
    for (let i = 0; i < 1_000; i++) write(ws, `f${i}`)
    const signal = abortedAtSecondTurn()
    const ctx = context(ws, {}, { signal })
    expect(await walkGlob(glob('*.ts'), rootFrame(ws), ws, ctx, new Turns(signal, 0))).toMatchObject({
      stopped: 'timeout',
      entriesScanned: 0,
    })
  })

  // judging a big listing holds the event loop as long as reading it did; one another check read before
  it('stops at its next turn while it judges a listing: timeout, never a miss', async () => {
    const ws = testDir()
    for (let i = 0; i < 300; i++) write(ws, `f${i}`)
    const ctx = context(ws)
    await ctx.listings.list(ws, new Turns(ctx.signal))
    const signal = abortedAtSecondTurn()
    const result = await walkGlob(glob('*.ts'), rootFrame(ws), ws, { ...ctx, signal }, new Turns(signal, 0))
    expect(result).toMatchObject({ stopped: 'timeout', entriesScanned: 300 })
  })

  it('goes on after a turn it was not told to stop in', async () => {
    const ws = testDir()
    for (let i = 0; i < 300; i++) write(ws, `f${i}`)
    const signal = new AbortController().signal
    // a slice of 0 ms: a turn at the end of each batch of 256 entries, read or judged
    const result = await walkGlob(glob('*.ts'), rootFrame(ws), ws, context(ws), new Turns(signal, 0))
    expect(result).toEqual({ entriesScanned: 300, rejected: [] })
  })

  it('hands the event loop back only once its slice is used up', async () => {
    const ws = hundredDirs()
    const signal = new AbortController().signal
    const started = performance.now()
    const walk = walkGlob(glob('**/nothing'), rootFrame(ws), ws, context(ws), new Turns(signal, 1_000))
    const taken = await turnsWhile(walk)
    expect(await walk).toMatchObject({ entriesScanned: 100 })
    expect(taken).toBeLessThanOrEqual(Math.floor((performance.now() - started) / 1_000) + 1)
  })

  // an empty directory has no entry to count towards the next look at the clock: listing it is the work
  it('hands the event loop back between directories, and stops at the next one once told to', async () => {
    const ws = hundredDirs()
    // with a slice of 0 ms, the walk's second turn is after its first directory
    const signal = abortedAtSecondTurn()
    const ctx = context(ws, {}, { signal })
    expect(await walkGlob(glob('**/nothing'), rootFrame(ws), ws, ctx, new Turns(signal, 0))).toMatchObject({
      stopped: 'timeout',
      entriesScanned: 100,
    })
  })

  it('keeps at most 20 rejected entries of its own', async () => {
    const ws = testDir()
    for (let i = 0; i < MAX_REJECTED + 5; i++) link(ws, `f${i}.ts`, `nowhere${i}`)
    const result = await walkGlob(glob('*.ts'), rootFrame(ws), ws, context(ws))
    expect(result).toMatchObject({ entriesScanned: MAX_REJECTED + 5 })
    expect(result.rejected).toHaveLength(MAX_REJECTED)
  })

  // listings are shared by the checks of one verify(): a directory gone since one was read holds nothing
  it('reads a directory that is gone since its parent was listed as empty', async () => {
    const ws = testDir()
    write(ws, 'd/x.ts')
    const ctx = context(ws)
    expect(await checkPaths('*.md', ctx)).toMatchObject({ status: 'unmet' })
    rmSync(join(ws, 'd'), { recursive: true })
    write(ws, 'd')
    expect(await checkPaths('**/*.ts', ctx)).toEqual({
      status: 'unmet',
      reason: 'no-match',
      observed: { entriesScanned: 1, rejected: [] },
    })
  })
})

// A signal aborted at the walk's second turn of the event loop (it gives the first before it lists anything).
function abortedAtSecondTurn(): AbortSignal {
  const controller = new AbortController()
  setImmediate(() => setImmediate(() => controller.abort()))
  return controller.signal
}

// A workspace of 100 empty directories.
function hundredDirs(): string {
  const ws = testDir()
  for (let i = 0; i < 100; i++) mkdirSync(join(ws, `d${i}`))
  return ws
}
