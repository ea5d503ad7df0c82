// The error codes have one owner, src/contract/errors.ts: the envelope's schema is closed over them, the
// OpenAPI document lists them, and docs/http-api.md's table of codes names each one, no more.
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { ERROR_CODES, ErrorCode, ErrorEnvelope } from '../../src/contract/index.js'
import { useTestApp } from '../support/app.js'

const sorted = (codes: Iterable<string>) => [...new Set(codes)].sort()

describe('error codes', () => {
  const h = useTestApp()

  it('close the envelope: a code outside them is not an answer of this API', () => {
    const envelope = (code: string) => ({ error: { code, message: 'm' } })
    expect(ErrorEnvelope.safeParse(envelope(ErrorCode.LeaseLost)).success).toBe(true)
    expect(ErrorEnvelope.safeParse(envelope('lease_lost')).success).toBe(false)
  })

  it('are the enum of the OpenAPI document', async () => {
    const doc = (await h.call('GET', '/openapi.json', { role: null })).body
    expect(sorted(doc.components.schemas.ErrorEnvelope.properties.error.properties.code.enum)).toEqual(
      sorted(ERROR_CODES),
    )
  })

  it('are the codes docs/http-api.md explains, each once', () => {
    const docs = readFileSync(new URL('../../docs/http-api.md', import.meta.url), 'utf8')
    const rows = [...docs.matchAll(/^\| (\d{3}) +\| `([a-z-]+)` +\|/gm)].map((m) => m[2] as string)
    expect(rows.length).toBe(new Set(rows).size)
    expect(sorted(rows)).toEqual(sorted(ERROR_CODES))
  })
})
