// Names read as bytes: a directory or a link whose name is not UTF-8 is seen, walked and followed; its bytes
// outside ASCII are matched by wildcards only, never by a character of a pattern, and reported as U+FFFD.
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { fsPath, nameOf, pathOf, shown } from '../../../worker/checks/names.js'
import { checkPaths } from '../../../worker/checks/paths.js'
import { context, sharedDir, testDir, write } from '../../support/checks.js'

// Not this process's uid, so the mode bits of the files a test creates decide.
const AGENT = { uid: 4242, gid: 4242 }

// A path below `root` from pieces that are text or bytes: bytes(ws, 'd', [0xff], '/f.ts') is ws/d\xff/f.ts.
function bytes(root: string, ...pieces: (string | number[])[]): Buffer {
  return Buffer.concat([Buffer.from(`${root}/`), ...pieces.map((p) => Buffer.from(p as string))])
}

describe('a name as the walk spells it', () => {
  it('is the text of a UTF-8 name, and a lone surrogate for each byte over 127 of any other', () => {
    expect(nameOf(Buffer.from('é日😀'))).toBe('é日😀')
    expect(nameOf(Buffer.from([0x78, 0xff]))).toBe('x\uDCFF')
    // é followed by a byte that is not UTF-8: the whole name is read byte by byte
    expect(nameOf(Buffer.from([0xc3, 0xa9, 0xff]))).toBe('\uDCC3\uDCA9\uDCFF')
    // a surrogate encoded in UTF-8 is not UTF-8
    expect(nameOf(Buffer.from([0xed, 0xa0, 0x80]))).toBe('\uDCED\uDCA0\uDC80')
  })

  it('goes back to the same bytes for the file system, and to U+FFFD in a report', () => {
    const path = Buffer.from([...Buffer.from('/w/é/'), 0x78, 0xff, 0x2f, 0xc3])
    expect(pathOf(path)).toBe('/w/é/x\uDCFF/\uDCC3')
    expect(fsPath(pathOf(path))).toEqual(path)
    expect(shown(pathOf(path))).toBe('/w/é/x\uFFFD/\uFFFD')
    // U+10080 is a pair whose low half is in the bytes' range: text, not a byte
    expect(fsPath('/w/\uD800\uDC80')).toBe('/w/\uD800\uDC80')
    expect(shown('/w/\uD800\uDC80')).toBe('/w/\uD800\uDC80')
  })
})

describe('paths: names that are not UTF-8', () => {
  it('walks a directory whose name is not UTF-8 on the way to a match', async () => {
    const ws = testDir()
    mkdirSync(bytes(ws, 'd', [0xff]))
    writeFileSync(bytes(ws, 'd', [0xff], '/target.ts'), 'x\n')
    for (const pattern of ['**/target.ts', 'd?/target.ts', '*/*.ts'])
      expect(await checkPaths(pattern, context(ws))).toEqual({
        status: 'met',
        observed: { match: 'd\uFFFD/target.ts' },
      })
  })

  it('follows a symlink whose name is not UTF-8, and one whose target is such a directory', async () => {
    const ws = testDir()
    write(ws, 'real/f.ts')
    symlinkSync('real', bytes(ws, 'l', [0xff]))
    expect(await checkPaths('l?/f.ts', context(ws))).toEqual({
      status: 'met',
      observed: { match: 'l\uFFFD/f.ts' },
    })
    mkdirSync(bytes(ws, 'd', [0xff]))
    writeFileSync(bytes(ws, 'd', [0xff], '/g.ts'), 'x\n')
    symlinkSync(Buffer.from([0x64, 0xff]), bytes(ws, 'to'))
    // a literal, through the static prefix, through a link the walk meets
    for (const pattern of ['to/g.ts', 'to/*.ts', '*o/g.ts'])
      expect(await checkPaths(pattern, context(ws))).toEqual({
        status: 'met',
        observed: { match: 'to/g.ts' },
      })
    expect(await checkPaths('to/', context(ws))).toEqual({ status: 'met', observed: { match: 'to' } })
  })

  it('never takes a character of a pattern for a byte that is not UTF-8, only a wildcard', async () => {
    const ws = testDir()
    writeFileSync(bytes(ws, 'x', [0xff]), 'x\n')
    // U+FFFD is what a string listing reads the byte as; ÿ is U+00FF, the byte read as Latin-1
    for (const pattern of ['x\uFFFD', 'x\uFFFD*', 'x[\uFFFD]', 'xÿ', 'xÿ*', 'x[[:alpha:]]'])
      expect((await checkPaths(pattern, context(ws))).status, pattern).toBe('unmet')
    for (const pattern of ['x?', 'x*', 'x[!a]'])
      expect(await checkPaths(pattern, context(ws))).toEqual({
        status: 'met',
        observed: { match: 'x\uFFFD' },
      })
  })

  it('lists a dangling symlink whose name is not UTF-8 with U+FFFD for the byte', async () => {
    const ws = testDir()
    symlinkSync('nowhere', bytes(ws, 'l', [0xff]))
    expect(await checkPaths('l*', context(ws))).toEqual({
      status: 'unmet',
      reason: 'no-match',
      observed: { entriesScanned: 1, rejected: [{ path: 'l\uFFFD', why: 'dangling-symlink' }] },
    })
  })

  it('lets the agent reach a match through a directory or a link whose name is not UTF-8', async () => {
    const ws = sharedDir()
    mkdirSync(bytes(ws, 'd', [0xff]), { mode: 0o755 })
    writeFileSync(bytes(ws, 'd', [0xff], '/g.ts'), 'x\n')
    symlinkSync(Buffer.from([0x64, 0xff]), bytes(ws, 'to'))
    const ctx = context(ws, {}, { agent: AGENT })
    expect(await checkPaths('d?/g.ts', ctx)).toEqual({ status: 'met', observed: { match: 'd\uFFFD/g.ts' } })
    expect(await checkPaths('t[o]/g.ts', ctx)).toEqual({ status: 'met', observed: { match: 'to/g.ts' } })
  })
})
