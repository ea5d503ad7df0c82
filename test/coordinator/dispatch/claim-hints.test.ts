import { describe, expect, it } from 'vitest'
import { ClaimHints } from '../../../src/coordinator/dispatch/claim-hints.js'

const hint = { contextRequires: { paths: ['a'] } }

describe('ClaimHints', () => {
  it('answers a hint for the exact dispatch, attempt and lease token', () => {
    const hints = new ClaimHints()
    hints.remember('d', 1, 't', hint)
    expect(hints.take('d', 2, 't')).toBeUndefined()
    expect(hints.take('d', 1, 'other')).toBeUndefined()
    expect(hints.take('e', 1, 't')).toBeUndefined()
    expect(hints.take('d', 1, 't')).toBe(hint)
  })

  it('holds the hints of many leases at once', () => {
    const hints = new ClaimHints()
    const other = { contextRequires: undefined }
    hints.remember('d', 1, 't', hint)
    hints.remember('e', 1, 't', other)
    hints.remember('d', 2, 'u', other)
    expect(hints.take('d', 1, 't')).toBe(hint)
    expect(hints.take('e', 1, 't')).toBe(other)
    expect(hints.take('d', 2, 'u')).toBe(other)
  })

  it('answers a hint once, so a retried report reads the stored answer', () => {
    const hints = new ClaimHints()
    hints.remember('d', 1, 't', hint)
    hints.take('d', 1, 't')
    expect(hints.take('d', 1, 't')).toBeUndefined()
  })

  it('forgets the hints it holds when a 10,001st comes, and keeps that one', () => {
    const hints = new ClaimHints()
    for (let i = 0; i < 10_000; i++) hints.remember(`d${i}`, 1, 't', hint)
    expect(hints.take('d9999', 1, 't')).toBe(hint)
    hints.remember('d9999', 1, 't', hint)
    hints.remember('d10000', 1, 't', hint)
    expect(hints.take('d0', 1, 't')).toBeUndefined()
    expect(hints.take('d9999', 1, 't')).toBeUndefined()
    expect(hints.take('d10000', 1, 't')).toBe(hint)
  })
})
