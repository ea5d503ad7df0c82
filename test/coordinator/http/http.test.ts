// toApiError: what a thrown error means to the client. A database that went away is 503 `unavailable`
// (the request may be repeated as it was), never a 500.
import { describe, expect, it } from 'vitest'
import { CircuitOpenError } from '../../../src/coordinator/db/unreachable.js'
import { toApiError } from '../../../src/coordinator/http/http.js'

// An error as postgres.js or Node raise it, wrapped the way drizzle wraps driver errors.
const coded = (code: string) => Object.assign(new Error(`failed: ${code}`), { code })
const wrapped = (cause: unknown) => Object.assign(new Error('Failed query: select 1'), { cause })

describe('toApiError', () => {
  it.each([
    'ECONNREFUSED',
    'ECONNRESET',
    'EPIPE',
    'ETIMEDOUT',
    'EHOSTUNREACH',
    'CONNECTION_CLOSED',
    'CONNECTION_ENDED',
    'CONNECTION_DESTROYED',
    'CONNECT_TIMEOUT',
  ])('answers a socket failure %s with 503 unavailable, also when wrapped', (code) => {
    expect(toApiError(coded(code))).toMatchObject({ status: 503, code: 'unavailable' })
    expect(toApiError(wrapped(coded(code)))).toMatchObject({ status: 503, code: 'unavailable' })
  })

  it.each([
    ['08006', 'connection failure'],
    ['08001', 'unable to connect'],
    ['57P01', 'admin shutdown'],
    ['57P02', 'crash shutdown'],
    ['57P03', 'starting up'],
    ['53300', 'too many connections'],
  ])('answers SQLSTATE %s (%s) with 503 unavailable', (code) => {
    expect(toApiError(wrapped(coded(code)))).toMatchObject({ status: 503, code: 'unavailable' })
  })

  it('finds a refused connect inside an AggregateError (a host name with several addresses)', () => {
    const err = Object.assign(new AggregateError([coded('ECONNREFUSED'), coded('ECONNREFUSED')]), {
      code: 'ECONNREFUSED',
    })
    expect(toApiError(wrapped(err))).toMatchObject({ status: 503, code: 'unavailable' })
    expect(toApiError(new AggregateError([coded('ECONNREFUSED')]))).toMatchObject({ status: 503 })
  })

  it('answers a statement the circuit failed unsent with 503 unavailable', () => {
    expect(toApiError(wrapped(new CircuitOpenError()))).toMatchObject({ status: 503, code: 'unavailable' })
  })

  it('keeps the statement timeout apart: 503 timeout', () => {
    expect(toApiError(wrapped(coded('57014')))).toMatchObject({ status: 503, code: 'timeout' })
  })

  it('still answers a bug with 500 internal', () => {
    expect(toApiError(new TypeError('x is undefined'))).toMatchObject({ status: 500, code: 'internal' })
    expect(toApiError(wrapped(coded('42P01')))).toMatchObject({ status: 500, code: 'internal' })
  })
})
