// One listing per directory per verify() call, shared by every paths check; "not there" is no listing.
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { DirectoryCache } from '../../../worker/checks/listing.js'
import { testDir, write } from './helpers.js'

describe('DirectoryCache', () => {
  it('reads a directory once and counts what it read', () => {
    const dir = testDir()
    write(dir, 'a')
    write(dir, 'b')
    const cache = new DirectoryCache()
    const first = cache.list(dir)
    expect(first?.map((e) => e.name).sort()).toEqual(['a', 'b'])
    expect(first?.every((e) => e.isFile())).toBe(true)
    write(dir, 'c')
    expect(cache.list(dir)).toBe(first)
    expect(cache.entriesRead).toBe(2)
  })

  it('has no listing for a directory that is not there, or a file, and remembers that', () => {
    const dir = testDir()
    write(dir, 'file')
    const cache = new DirectoryCache()
    expect(cache.list(join(dir, 'missing'))).toBeNull()
    expect(cache.list(join(dir, 'file'))).toBeNull()
    mkdirSync(join(dir, 'missing'))
    write(dir, 'missing/x')
    expect(cache.list(join(dir, 'missing'))).toBeNull()
    expect(cache.entriesRead).toBe(0)
  })
})
