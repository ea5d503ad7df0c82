import { execFileSync, spawn } from 'node:child_process'
import {
  chmodSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  handOver,
  liveProcesses,
  missingCapabilities,
  readableBy,
  slotIdentity,
  sweep,
  writableBy,
} from '../../worker/identity.js'
import { testDir, write } from '../support/checks.js'
import { alive, diesWithin } from '../support/git-fixtures.js'
import { waitFor } from '../support/wait.js'

const isRoot = process.getuid?.() === 0

describe('slotIdentity', () => {
  it('gives slot i the uid and gid base + i', () => {
    expect(slotIdentity(61_000, 0)).toEqual({ uid: 61_000, gid: 61_000 })
    expect(slotIdentity(61_000, 3)).toEqual({ uid: 61_003, gid: 61_003 })
  })
})

describe('missingCapabilities', () => {
  it('needs nothing more with root’s full set', () => {
    expect(missingCapabilities('Name:\tnode\nCapEff:\t000001ffffffffff\n')).toEqual([])
  })

  it('names what a worker without capabilities lacks', () => {
    expect(missingCapabilities('CapEff:\t0000000000000000\n')).toEqual([
      'CAP_CHOWN',
      'CAP_DAC_OVERRIDE',
      'CAP_FOWNER',
      'CAP_KILL',
      'CAP_SETGID',
      'CAP_SETUID',
    ])
  })

  it('names only the missing ones (a container with CAP_SETUID dropped)', () => {
    // all of bits 0-7 but 7
    expect(missingCapabilities('CapEff:\t000000000000007f\n')).toEqual(['CAP_SETUID'])
  })

  it('counts everything as missing when it cannot read the set', () => {
    expect(missingCapabilities('')).toHaveLength(6)
  })
})

// Mode bits decide: these run as any user, for agent uids that are not the test's own.
const agents = [slotIdentity(4_242, 0), slotIdentity(4_242, 1)]

describe('writableBy: where an agent could replace a file', () => {
  it('is nowhere for a file in directories only their owner writes (sticky /tmp above)', () => {
    const dir = testDir()
    chmodSync(dir, 0o755)
    expect(writableBy(write(dir, 'git', '', 0o755), agents)).toBeUndefined()
  })

  it('is the directory that others may write', () => {
    const dir = testDir()
    const file = write(dir, 'bin/git', '', 0o755)
    chmodSync(join(dir, 'bin'), 0o777)
    expect(writableBy(file, agents)).toBe(join(dir, 'bin'))
  })

  it('is the file itself when others may write it', () => {
    const file = write(testDir(), 'git', '', 0o757)
    expect(writableBy(file, agents)).toBe(file)
  })

  it('follows a link to the file that runs', () => {
    const open = testDir()
    chmodSync(open, 0o777)
    const real = write(open, 'git', '', 0o755)
    const safe = testDir()
    symlinkSync(real, join(safe, 'git'))
    expect(writableBy(join(safe, 'git'), agents)).toBe(open)
  })
})

describe('writableBy: the path as given', () => {
  it('is the directory holding a link the agents could point elsewhere', () => {
    const safe = testDir()
    chmodSync(safe, 0o755)
    const real = write(safe, 'creds', '', 0o600)
    const open = testDir()
    chmodSync(open, 0o777)
    symlinkSync(real, join(open, 'creds'))
    expect(writableBy(join(open, 'creds'), agents)).toBe(open)
  })
})

describe('readableBy: whether an agent could read a secret', () => {
  it('is true for a file others may read, in directories they may search', () => {
    const dir = testDir()
    chmodSync(dir, 0o755)
    expect(readableBy(write(dir, 'token', 't', 0o644), agents)).toBe(true)
  })

  it('is false for a file only its owner reads', () => {
    const dir = testDir()
    chmodSync(dir, 0o755)
    expect(readableBy(write(dir, 'token', 't', 0o600), agents)).toBe(false)
  })

  it('is false behind a directory they may not search', () => {
    const dir = testDir()
    chmodSync(dir, 0o700)
    expect(readableBy(write(dir, 'token', 't', 0o644), agents)).toBe(false)
  })
})

// Switching uids needs root; CI runs as root.
describe.runIf(isRoot)('sweep', () => {
  const who = { uid: 61_900, gid: 61_900 }

  it('ends every process of the uid, also those that left their group with setsid', async () => {
    const leader = spawn('sh', ['-c', 'setsid sleep 60 & sleep 60'], {
      ...who,
      detached: true,
      stdio: 'ignore',
    })
    // sh, its sleep, and the sleep that left with setsid
    await waitFor(() => liveProcesses(who.uid).length >= 3, { what: 'three processes of the uid' })
    const before = liveProcesses(who.uid)
    await sweep(who)
    for (const pid of before) expect(await diesWithin(pid)).toBe(true)
    expect(liveProcesses(who.uid)).toEqual([])
    expect(leader.pid && alive(leader.pid)).toBe(false)
  })

  // A process whose main thread called pthread_exit shows as a zombie in /proc/<pid>/status while its
  // other threads run on: it is alive, and must be swept. (A C program: no script can do this.)
  it('ends a process whose main thread exited while another thread runs', async () => {
    const dir = testDir()
    chmodSync(dir, 0o755)
    const source = write(
      dir,
      'zl.c',
      '#include <pthread.h>\n#include <unistd.h>\nstatic void *run(void *a) { for (;;) sleep(1); return a; }\n' +
        'int main(void) { pthread_t t; pthread_create(&t, 0, run, 0); pthread_exit(0); }\n',
    )
    execFileSync('cc', ['-pthread', '-o', join(dir, 'zl'), source])
    const child = spawn(join(dir, 'zl'), [], { ...who, detached: true, stdio: 'ignore' })
    const pid = child.pid ?? 0
    await waitFor(() => /State:\s*Z/.test(readFileSync(`/proc/${pid}/status`, 'utf8')), {
      everyMs: 20,
      what: 'the main thread to exit',
    })
    expect(liveProcesses(who.uid)).toContain(pid)
    await sweep(who)
    expect(liveProcesses(who.uid)).toEqual([])
  })

  it('leaves processes of other uids alone', async () => {
    const other = spawn('sleep', ['60'], { uid: 61_901, gid: 61_901, stdio: 'ignore' })
    try {
      await waitFor(() => liveProcesses(61_901).includes(other.pid ?? 0), { what: 'the other uid’s process' })
      await sweep(who)
      expect(other.pid && alive(other.pid)).toBe(true)
    } finally {
      other.kill('SIGKILL')
    }
  })
})

describe.runIf(isRoot)('handing files to the slot uid', () => {
  const who = { uid: 61_950, gid: 61_950 }
  const owner = (path: string) => lstatSync(path).uid

  it('gives the whole tree, links themselves and not what they point at, and closes its top', async () => {
    const outside = testDir()
    const secret = write(outside, 'secret')
    const ws = testDir()
    write(ws, 'src/a.ts')
    symlinkSync(secret, join(ws, 'src', 'link'))
    await handOver(ws, who)
    for (const path of [ws, join(ws, 'src'), join(ws, 'src/a.ts'), join(ws, 'src/link')]) {
      expect(owner(path)).toBe(who.uid)
    }
    expect(statSync(ws).mode & 0o777).toBe(0o700)
    expect(owner(secret)).toBe(0)
  })

  it('hands over names that are not UTF-8, and what is below them', async () => {
    const ws = testDir()
    const odd = Buffer.concat([Buffer.from(`${ws}/`), Buffer.from([0x66, 0xff])])
    mkdirSync(odd)
    const file = Buffer.concat([odd, Buffer.from([0x2f, 0xfe])])
    writeFileSync(file, 'x')
    await handOver(ws, who)
    expect(lstatSync(odd).uid).toBe(who.uid)
    expect(lstatSync(file).uid).toBe(who.uid)
  })

  it('lets the event loop turn in the middle of a big directory (a heartbeat must not wait for it)', async () => {
    const ws = testDir()
    const big = join(ws, 'big')
    mkdirSync(big)
    for (let i = 0; i < 3_000; i++) writeFileSync(join(big, String(i)), '')
    const names = readdirSync(big)
    const [first, last] = [join(big, names[0] as string), join(big, names.at(-1) as string)]
    let halfway = 0
    let walking = true
    const tick = () => {
      if (!walking) return
      if (owner(first) === who.uid && owner(last) !== who.uid) halfway++
      setImmediate(tick)
    }
    setImmediate(tick)
    await handOver(ws, who)
    walking = false
    expect(halfway).toBeGreaterThan(0)
    expect(owner(last)).toBe(who.uid)
  })

  it("leaves alone a file with another link (a local clone hard-links the source's objects)", async () => {
    const source = testDir()
    const object = write(source, 'objects/ab/cdef')
    const ws = testDir()
    mkdirSync(join(ws, 'objects'))
    linkSync(object, join(ws, 'objects', 'cdef'))
    write(ws, 'own.txt')
    await handOver(ws, who)
    expect(owner(object)).toBe(0)
    expect(owner(join(ws, 'own.txt'))).toBe(who.uid)
  })
})
