import { lstatSync, mkdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { isInside, isMissing } from '../../../worker/run/paths.js'
import { testDir } from '../../support/checks.js'

function errorOf(fn: () => unknown): unknown {
  try {
    fn()
  } catch (err) {
    return err
  }
  throw new Error('expected a throw')
}

describe('isInside', () => {
  it('holds for the root itself', () => {
    expect(isInside('/srv/root', '/srv/root')).toBe(true)
  })

  it('holds for a path below the root', () => {
    expect(isInside('/srv/root/a/b', '/srv/root')).toBe(true)
  })

  it('refuses a sibling whose name starts with the root', () => {
    expect(isInside('/srv/root-evil', '/srv/root')).toBe(false)
    expect(isInside('/srv/rootx/a', '/srv/root')).toBe(false)
  })

  it('refuses the parent of the root', () => {
    expect(isInside('/srv', '/srv/root')).toBe(false)
  })

  it('holds for every absolute path under /', () => {
    expect(isInside('/etc/passwd', '/')).toBe(true)
    expect(isInside('/', '/')).toBe(true)
  })

  it('refuses a relative path under /', () => {
    expect(isInside('etc', '/')).toBe(false)
  })
})

describe('isMissing', () => {
  it('reads a path that is not there as missing', () => {
    expect(isMissing(errorOf(() => statSync(join(testDir(), 'none'))))).toBe(true)
  })

  it('reads a path through a file as missing', () => {
    const dir = testDir()
    writeFileSync(join(dir, 'file'), '')
    expect(isMissing(errorOf(() => statSync(join(dir, 'file', 'below'))))).toBe(true)
  })

  it('reads a link loop as missing', () => {
    const dir = testDir()
    symlinkSync('loop', join(dir, 'loop'))
    expect(isMissing(errorOf(() => statSync(join(dir, 'loop'))))).toBe(true)
  })

  it('reads a name longer than the system takes as missing', () => {
    expect(isMissing(errorOf(() => lstatSync(join(testDir(), 'x'.repeat(300)))))).toBe(true)
  })

  it('does not read a refused or any other error as missing', () => {
    expect(isMissing(Object.assign(new Error('denied'), { code: 'EACCES' }))).toBe(false)
    expect(isMissing(Object.assign(new Error('busy'), { code: 'EBUSY' }))).toBe(false)
    expect(isMissing(new Error('no code'))).toBe(false)
  })

  it('does not read an entry that is there (EEXIST) as missing', () => {
    const dir = join(testDir(), 'here')
    mkdirSync(dir)
    expect(isMissing(errorOf(() => mkdirSync(dir)))).toBe(false)
  })
})
