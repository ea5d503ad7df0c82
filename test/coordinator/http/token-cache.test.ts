// TokenCache: resolved tokens kept briefly, never past their expiry, and never past an invalidation.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { TokenCache } from '../../../src/coordinator/http/token-cache.js'

describe('TokenCache', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: new Date('2026-06-01T00:00:00Z') })
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('keeps a resolved token for ttlMs', () => {
    const cache = new TokenCache(10_000)
    cache.set('h', 'worker', null, cache.stamp())
    vi.advanceTimersByTime(9_999)
    expect(cache.get('h')).toBe('worker')
    vi.advanceTimersByTime(1)
    expect(cache.get('h')).toBeUndefined()
  })

  it('never keeps a token past its expiry', () => {
    const cache = new TokenCache(10_000)
    cache.set('h', 'worker', Date.now() + 2_000, cache.stamp())
    vi.advanceTimersByTime(2_000)
    expect(cache.get('h')).toBeUndefined()
  })

  it('forgets everything on invalidate', () => {
    const cache = new TokenCache(10_000)
    cache.set('h', 'worker', null, cache.stamp())
    cache.invalidate()
    expect(cache.get('h')).toBeUndefined()
  })

  it('does not keep a lookup that an invalidation overtook', () => {
    const cache = new TokenCache(10_000)
    // The lookup reads the token, a revoke commits and invalidates, then the lookup's answer arrives.
    const stamp = cache.stamp()
    cache.invalidate()
    cache.set('h', 'worker', null, stamp)
    expect(cache.get('h')).toBeUndefined()
  })

  it('keeps nothing with a ttl of 0', () => {
    const cache = new TokenCache(0)
    cache.set('h', 'worker', null, cache.stamp())
    expect(cache.get('h')).toBeUndefined()
  })
})
