// One listing per directory per verify() call, shared by every paths check; "not there" is no listing.
import { mkdirSync, readdirSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { DirectoryCache, type Listing } from '../../../worker/checks/listing.js'
import { Turns } from '../../../worker/checks/turns.js'
import { testDir, turnsWhile, write } from '../../support/checks.js'

describe('DirectoryCache', () => {
  it('reads a directory once and counts what it read', async () => {
    const dir = testDir()
    write(dir, 'a')
    write(dir, 'b')
    const cache = new DirectoryCache()
    // read in one readdirSync, no promise: a walk of small directories costs none
    const first = now(cache.list(dir, turns()))
    expect(first?.map((e) => e.name).sort()).toEqual(['a', 'b'])
    expect(first?.every((e) => !e.isDirectory() && !e.isSymbolicLink())).toBe(true)
    write(dir, 'c')
    expect(await cache.list(dir, turns())).toBe(first)
    expect(cache.entriesRead).toBe(2)
  })

  it('reads it again as bytes when one of its names is not UTF-8, the others as they are', async () => {
    const dir = testDir()
    write(dir, 'é')
    mkdirSync(Buffer.from([...Buffer.from(`${dir}/x`), 0xff]))
    const listing = now(new DirectoryCache().list(dir, turns()))
    expect(listing?.map((e) => `${e.name} ${e.isDirectory()}`).sort()).toEqual(['x\uDCFF true', 'é false'])
  })

  it('has no listing for a directory that is not there, or a file, and remembers that', async () => {
    const dir = testDir()
    write(dir, 'file')
    const cache = new DirectoryCache()
    expect(await cache.list(join(dir, 'missing'), turns())).toBeNull()
    expect(await cache.list(join(dir, 'file'), turns())).toBeNull()
    mkdirSync(join(dir, 'missing'))
    write(dir, 'missing/x')
    expect(await cache.list(join(dir, 'missing'), turns())).toBeNull()
    expect(cache.entriesRead).toBe(0)
  })
})

describe('DirectoryCache, a directory larger than 8 KiB', () => {
  // 1,000 entries: 36 KiB on ext4, 20 KiB on tmpfs
  function bigDir(): string {
    const dir = testDir()
    for (let i = 0; i < 1_000; i++) {
      if (i % 3 === 0) mkdirSync(join(dir, `d${i}`))
      else if (i % 3 === 1) write(dir, `f${i}`)
      else symlinkSync(`d${i - 2}`, join(dir, `l${i}`))
    }
    return dir
  }

  it('reads it between turns, as readdirSync would: the same entries, the same types', async () => {
    const dir = bigDir()
    const cache = new DirectoryCache()
    const listing = cache.list(dir, turns())
    expect(listing).toBeInstanceOf(Promise)
    const kinds = (entries: Listing) =>
      entries?.map((e) => `${e.name} ${e.isDirectory()} ${e.isSymbolicLink()}`).sort()
    expect(kinds(await listing)).toEqual(kinds(readdirSync(dir, { withFileTypes: true })))
    expect(cache.entriesRead).toBe(1_000)
    expect(cache.list(dir, turns())).toBe(await listing)
  })

  it('reads it again as bytes, between turns, when a name in it is not UTF-8', async () => {
    const dir = bigDir()
    mkdirSync(Buffer.from([...Buffer.from(`${dir}/x`), 0xff]))
    const cache = new DirectoryCache()
    const listing = cache.list(dir, turns())
    expect(listing).toBeInstanceOf(Promise)
    const names = (await listing)?.map((e) => e.name)
    expect(names).toHaveLength(1_001)
    expect(names).toContain('x\uDCFF')
    expect(names).not.toContain('x\uFFFD')
    expect((await listing)?.find((e) => e.name === 'x\uDCFF')?.isDirectory()).toBe(true)
  })

  // a later check of the same verify() must not see a truncated directory as whole: that would be a miss
  it('keeps nothing of a listing stopped part-way, so that it is read whole the next time', async () => {
    const dir = bigDir()
    const cache = new DirectoryCache()
    const signal = abortedAtFirstTurn()
    const stopped = await Promise.resolve(cache.list(dir, new Turns(signal, 0))).catch((err: unknown) => err)
    expect(stopped).toBe(signal.reason)
    expect(cache.entriesRead).toBe(0)
    expect(await cache.list(dir, turns())).toHaveLength(1_000)
    expect(cache.entriesRead).toBe(1_000)
  })

  it('hands the event loop back only once its slice is used up', async () => {
    const dir = bigDir()
    const started = performance.now()
    const taken = await turnsWhile(
      new DirectoryCache().list(dir, new Turns(new AbortController().signal, 1_000)),
    )
    expect(taken).toBeLessThanOrEqual(Math.floor((performance.now() - started) / 1_000) + 1)
  })

  it('closes the directory it stopped reading', async () => {
    const dir = bigDir()
    const open = () => readdirSync('/proc/self/fd').length
    const before = open()
    const listing = new DirectoryCache().list(dir, new Turns(abortedAtFirstTurn(), 0))
    await expect(listing).rejects.toThrow()
    expect(open()).toBe(before)
  })
})

// A listing that is no promise.
function now(listing: Listing | Promise<Listing>): Listing {
  if (listing instanceof Promise) throw new Error('a promise')
  return listing
}

// fresh turns of the default slice, never told to stop
function turns(): Turns {
  return new Turns(new AbortController().signal)
}

// A signal aborted at the next turn of the event loop: a listing's first turn, with a slice of 0 ms, is
// after its first batch.
function abortedAtFirstTurn(): AbortSignal {
  const controller = new AbortController()
  setImmediate(() => controller.abort())
  return controller.signal
}
