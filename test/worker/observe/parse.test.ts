// The trace reader on strace's own line shapes (the tracer tests run it on real traces).
import { describe, expect, it } from 'vitest'
import { MAX_OBSERVED_EXEC as MAX_EXEC } from '../../../src/contract/index.js'
import { parseCall, TraceReader } from '../../../worker/observe/parse.js'

const PATH = ['/opt/bin', '/usr/bin']
const ENOENT = '= -1 ENOENT (No such file or directory)'
const read = (lines: string[], wrappers = 0) => {
  const reader = new TraceReader('/ws', PATH, wrappers)
  for (const line of lines) reader.line(line)
  return reader.needs()
}

describe('the trace reader', () => {
  it('resolves a path against the descriptor strace names (-y), and reads C escapes', () => {
    expect(
      parseCall(`openat(AT_FDCWD</ws/sub>, "../a\\"b\\x41\\101.txt", O_RDONLY) ${ENOENT}`),
    ).toMatchObject({
      path: '/ws/a"bAA.txt',
      ok: false,
      errno: 'ENOENT',
    })
    expect(parseCall('openat(3, "x", O_RDONLY) = 4')?.path).toBeUndefined()
    // a path strace cut short (-s) is no path
    expect(parseCall(`openat(AT_FDCWD</ws>, "abc"..., O_RDONLY) ${ENOENT}`)).toBeUndefined()
  })

  it('reads a path whose directory holds ") = ", an escaped ">" or bytes of UTF-8', () => {
    const line = `openat(AT_FDCWD</ws/a) = -1 \\76b>, "x.txt", O_RDONLY) = 3</ws/a) = -1 \\76b/x.txt>`
    expect(parseCall(line)).toMatchObject({ path: '/ws/a) = -1 >b/x.txt', ok: true })
    expect(parseCall(`openat(AT_FDCWD</ws>, "caf\\303\\251.txt", O_RDONLY) ${ENOENT}`)?.path).toBe(
      '/ws/café.txt',
    )
    expect(parseCall(`openat(AT_FDCWD</ws (deleted)>, "x", O_RDONLY) ${ENOENT}`)?.path).toBe('/ws/x')
  })

  it('counts a name missing only when every PATH entry was searched, found when any look succeeded', () => {
    const needs = read([
      `10 newfstatat(AT_FDCWD</ws>, "/opt/bin/pnpm", 0x1, 0) ${ENOENT}`,
      `10 newfstatat(AT_FDCWD</ws>, "/usr/bin/pnpm", 0x1, 0) ${ENOENT}`,
      // a probe of one entry only: not a need
      `10 access("/opt/bin/less", X_OK) ${ENOENT}`,
      `10 execve("/opt/bin/node", ["node"], 0x1 /* 3 vars */) ${ENOENT}`,
      '11 execve("/usr/bin/node", ["node"], 0x1 /* 3 vars */) = 0',
      // not a PATH entry
      `10 execve("/elsewhere/yarn", ["yarn"], 0x1 /* 3 vars */) ${ENOENT}`,
    ])
    expect(needs.exec).toEqual([{ name: 'pnpm' }, { name: 'node', path: '/usr/bin/node', ran: true }])
  })

  it('joins a call another process interrupted', () => {
    const needs = read([
      '10 openat(AT_FDCWD</ws>, "gone.txt", O_RDONLY <unfinished ...>',
      '11 execve("/usr/bin/cat", ["cat"], 0x1 /* 3 vars */) = 0',
      `10 <... openat resumed>) ${ENOENT}`,
    ])
    expect(needs).toEqual({
      exec: [{ name: 'cat', path: '/usr/bin/cat', ran: true }],
      paths: ['gone.txt'],
      cut: false,
    })
  })

  it('keeps workspace files opened to be read, not created, nor git’s or packages’ own', () => {
    const needs = read([
      `10 openat(AT_FDCWD</ws>, "new.txt", O_WRONLY|O_CREAT|O_TRUNC, 0666) ${ENOENT}`,
      `10 openat(AT_FDCWD</ws>, ".git/packed-refs", O_RDONLY) ${ENOENT}`,
      `10 openat(AT_FDCWD</ws>, "node_modules/x/package.json", O_RDONLY) ${ENOENT}`,
      `10 openat(AT_FDCWD</ws>, "/etc/x.conf", O_RDONLY) ${ENOENT}`,
      `10 newfstatat(AT_FDCWD</ws>, "probe.js", 0x1, 0) ${ENOENT}`,
      `10 openat(AT_FDCWD</ws>, "src/data.json", O_RDONLY|O_CLOEXEC) ${ENOENT}`,
    ])
    expect(needs.paths).toEqual(['src/data.json'])
  })

  it('leaves out the wrappers’ own execs (setpriv, env), and only them', () => {
    const needs = read(
      [
        '10 execve("/usr/bin/setpriv", ["setpriv"], 0x1 /* 3 vars */) = 0',
        '10 execve("/usr/bin/env", ["env"], 0x1 /* 3 vars */) = 0',
        '10 execve("/usr/bin/sh", ["sh"], 0x1 /* 3 vars */) = 0',
      ],
      2,
    )
    expect(needs.exec).toEqual([{ name: 'sh', path: '/usr/bin/sh', ran: true }])
  })

  it('says when its bound cut the record', () => {
    const lines = Array.from(
      { length: MAX_EXEC + 1 },
      (_, i) => `10 execve("/usr/bin/p${i}", ["p"], 0x1) = 0`,
    )
    const needs = read(lines)
    expect(needs.exec).toHaveLength(MAX_EXEC)
    expect(needs.cut).toBe(true)
  })
})
