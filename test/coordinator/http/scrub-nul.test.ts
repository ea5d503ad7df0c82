import { describe, expect, it } from 'vitest'
import { scrubNul } from '../../../src/coordinator/http/http.js'

describe('scrubNul', () => {
  it('replaces NUL in string values at any depth with U+FFFD', () => {
    const body = { a: [{ b: 'x\u0000y' }, 'ok'], c: { d: ['\u0000'] } }
    expect(scrubNul(body)).toEqual({ a: [{ b: 'x\uFFFDy' }, 'ok'], c: { d: ['\uFFFD'] } })
  })

  it('leaves the request body untouched when it replaces', () => {
    const body = { a: ['x\u0000'] }
    scrubNul(body)
    expect(body.a[0]).toBe('x\u0000')
  })

  it('answers a body without NUL as the same object, not a copy', () => {
    const body = { a: [{ b: 'x' }], n: 1, z: null }
    expect(scrubNul(body)).toBe(body)
  })

  it('leaves keys alone (a NUL there is refused by the database)', () => {
    expect(scrubNul({ 'a\u0000b': 'x' })).toEqual({ 'a\u0000b': 'x' })
  })
})
