import { chmodSync, mkdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { Access, agentAccess, mayAccess, reachable, type SearchCache } from '../../../worker/checks/access.js'
import { link, sharedDir, write } from '../../support/checks.js'
import { failingMount } from '../../support/failing-mount.js'

// Not this process's uid, so the mode bits of the files a test creates decide.
const AGENT = { uid: 4242, gid: 4242 }
const OTHER = 4343
const FILE = 0o100000
const DIR = 0o040000

describe('mayAccess', () => {
  it('takes the owner bits for the owner, even when group or other would grant more', () => {
    const owned = { mode: FILE | 0o077, uid: AGENT.uid, gid: AGENT.gid }
    expect(mayAccess(AGENT, owned, Access.Execute)).toBe(false)
    expect(mayAccess(AGENT, owned, Access.Read)).toBe(false)
    expect(mayAccess(AGENT, { ...owned, mode: FILE | 0o700 }, Access.Execute)).toBe(true)
  })

  it('takes the group bits when the gid matches, even when other would grant more', () => {
    const grouped = { mode: FILE | 0o701, uid: OTHER, gid: AGENT.gid }
    expect(mayAccess(AGENT, grouped, Access.Execute)).toBe(false)
    expect(mayAccess(AGENT, { ...grouped, mode: FILE | 0o750 }, Access.Execute)).toBe(true)
    expect(mayAccess(AGENT, { ...grouped, mode: FILE | 0o750 }, Access.Write)).toBe(false)
  })

  it('takes the other bits for anyone else', () => {
    const foreign = { mode: FILE | 0o771, uid: OTHER, gid: OTHER }
    expect(mayAccess(AGENT, foreign, Access.Execute)).toBe(true)
    expect(mayAccess(AGENT, foreign, Access.Read)).toBe(false)
  })

  it('lets root read and write anything, but execute a file only when some execute bit is set', () => {
    const root = { uid: 0, gid: 0 }
    const locked = { mode: FILE | 0o000, uid: OTHER, gid: OTHER }
    expect(mayAccess(root, locked, Access.Read)).toBe(true)
    expect(mayAccess(root, locked, Access.Write)).toBe(true)
    expect(mayAccess(root, locked, Access.Execute)).toBe(false)
    expect(mayAccess(root, { ...locked, mode: FILE | 0o010 }, Access.Execute)).toBe(true)
    expect(mayAccess(root, { ...locked, mode: DIR | 0o000 }, Access.Execute)).toBe(true)
  })
})

// Directories the test creates belong to this process's uid, never to AGENT: their mode bits decide.
describe('reachable', () => {
  it('needs search on every directory down to the parent, not on the entry itself', () => {
    const root = sharedDir()
    mkdirSync(join(root, 'a/b'), { recursive: true })
    chmodSync(join(root, 'a/b'), 0o700)
    expect(reachable(join(root, 'a/b'), AGENT, new Map())).toBe(true)
    write(root, 'a/b/c')
    expect(reachable(join(root, 'a/b/c'), AGENT, new Map())).toBe(false)
    chmodSync(join(root, 'a/b'), 0o711)
    expect(reachable(join(root, 'a/b/c'), AGENT, new Map())).toBe(true)
  })

  it("needs search on a symlink's own directories and on its target's", () => {
    const root = sharedDir()
    write(root, 'closed/tool')
    chmodSync(join(root, 'closed'), 0o700)
    link(root, 'open/tool', join(root, 'closed/tool'))
    expect(reachable(join(root, 'open/tool'), AGENT, new Map())).toBe(false)

    write(root, 'public/tool')
    link(root, 'hidden/tool', join(root, 'public/tool'))
    chmodSync(join(root, 'hidden'), 0o700)
    expect(reachable(join(root, 'hidden/tool'), AGENT, new Map())).toBe(false)
  })

  it('needs search on the directories a chain of symlinks passes through', () => {
    const root = sharedDir()
    write(root, 'real/tool')
    link(root, 'hop/tool', '../real/tool')
    chmodSync(join(root, 'hop'), 0o700)
    // open/tool → hop/tool → real/tool: neither the path as given nor its real path runs through hop/
    link(root, 'open/tool', '../hop/tool')
    expect(reachable(join(root, 'open/tool'), AGENT, new Map())).toBe(false)
    chmodSync(join(root, 'hop'), 0o711)
    expect(reachable(join(root, 'open/tool'), AGENT, new Map())).toBe(true)
  })

  it('needs search on a directory reached through a symlinked directory', () => {
    const root = sharedDir()
    write(root, 'store/v1/bin/tool')
    chmodSync(join(root, 'store'), 0o700)
    link(root, 'current', join(root, 'store/v1'))
    expect(reachable(join(root, 'current/bin/tool'), AGENT, new Map())).toBe(false)
  })

  it('keeps the verdict on a directory for the life of its cache', () => {
    const root = sharedDir()
    write(root, 'closed/tool')
    chmodSync(join(root, 'closed'), 0o700)
    const cache: SearchCache = new Map()
    expect(reachable(join(root, 'closed/tool'), AGENT, cache)).toBe(false)
    chmodSync(join(root, 'closed'), 0o755)
    expect(reachable(join(root, 'closed/tool'), AGENT, cache)).toBe(false)
    expect(reachable(join(root, 'closed/tool'), AGENT, new Map())).toBe(true)
  })

  it('is false for an entry that is not there or a symlink loop', () => {
    const root = sharedDir()
    expect(reachable(join(root, 'gone'), AGENT, new Map())).toBe(false)
    link(root, 'loop', join(root, 'loop'))
    expect(reachable(join(root, 'loop'), AGENT, new Map())).toBe(false)
  })
})

describe('reachable: links', () => {
  it('follows an absolute link and a relative one, with ".", ".." and doubled slashes in it', () => {
    const root = sharedDir()
    write(root, 'real/tool')
    link(root, 'bin/absolute', join(root, 'real/tool'))
    link(root, 'bin/relative', './/../real/./tool')
    expect(reachable(join(root, 'bin/absolute'), AGENT, new Map())).toBe(true)
    expect(reachable(join(root, 'bin/relative'), AGENT, new Map())).toBe(true)
  })

  // The kernel gives up (ELOOP) past 40 links in one lookup; so does the walk.
  it('follows a chain of 40 links and gives up at 41, as the kernel does', () => {
    const root = sharedDir()
    write(root, 'tool')
    let target = join(root, 'tool')
    for (let i = 1; i <= 41; i++) {
      link(root, `l${i}`, target)
      target = join(root, `l${i}`)
    }
    expect(statSync(join(root, 'l40')).isFile()).toBe(true)
    expect(reachable(join(root, 'l40'), AGENT, new Map())).toBe(true)
    expect(() => statSync(join(root, 'l41'))).toThrow(/ELOOP/)
    expect(reachable(join(root, 'l41'), AGENT, new Map())).toBe(false)
  })

  it('is false for a link through a file, however executable, as the kernel (ENOTDIR)', () => {
    const root = sharedDir()
    write(root, 'real/tool')
    write(root, 'data', 'x', 0o755)
    link(root, 'bin/tool', '../data/../real/tool')
    expect(() => statSync(join(root, 'bin/tool'))).toThrow(/ENOTDIR/)
    expect(reachable(join(root, 'bin/tool'), AGENT, new Map())).toBe(false)
  })

  it('is false, not a fault, for a link through a directory that is not there', () => {
    const root = sharedDir()
    link(root, 'bin/tool', '../missing/deeper/tool')
    expect(reachable(join(root, 'bin/tool'), AGENT, new Map())).toBe(false)
  })
})

// The kernel's own answers, from a file system that fails every lookup with one errno.
describe('reachable: what the kernel refuses', () => {
  it.for(['EACCES', 'EPERM'] as const)('is false where looking is refused (%s)', async (code, ctx) => {
    const refused = await failingMount(code)
    if (!refused) return ctx.skip()
    expect(reachable(join(refused, 'tool'), AGENT, new Map())).toBe(false)
  })

  it('throws EIO rather than read a fault as unreachable', async (ctx) => {
    const broken = await failingMount('EIO')
    if (!broken) return ctx.skip()
    expect(() => reachable(join(broken, 'tool'), AGENT, new Map())).toThrow(/EIO/)
  })
})

describe('agentAccess', () => {
  it('shares one cache among the checks of one verify() call, and judges for this process without an agent', () => {
    const memo = new Map<string, unknown>()
    const first = agentAccess({ agent: AGENT, memo })
    expect(first).toEqual({ who: AGENT, cache: expect.any(Map) })
    expect(agentAccess({ agent: AGENT, memo })?.cache).toBe(first?.cache)
    expect(agentAccess({ agent: AGENT, memo: new Map() })?.cache).not.toBe(first?.cache)
    expect(agentAccess({ memo })).toBeUndefined()
  })
})
