import { describe, expect, it } from 'vitest'
import { REDACTED, redactor } from '../../src/log/redact.js'

const redact = redactor(['process-token-0123456789', 'quote"and\\slash-secret'])

describe('redacting a log line', () => {
  it('removes the credentials of a URL and keeps the rest of it', () => {
    for (const url of [
      'https://user:pa55word@git.example.test/acme/repo.git',
      'https://ghp_tokenOnly123@git.example.test/x',
      'postgres://preflight:db-secret@postgres:5432/preflight',
      'ssh://git:sshpw@host/repo',
      'https://us:p@ss@host/x',
    ]) {
      const out = redact(JSON.stringify({ msg: `cloning ${url} failed` }))
      expect(out).not.toMatch(/pa55word|ghp_tokenOnly123|db-secret|sshpw|p@ss/)
      expect(out).toContain(`://${REDACTED}@`)
    }
    expect(redact('see https://git.example.test/acme/repo.git')).toBe(
      'see https://git.example.test/acme/repo.git',
    )
  })

  it('removes a bearer token wherever it stands', () => {
    const out = redact('{"msg":"GET /v1 with Authorization: Bearer abc.def-123 failed"}')
    expect(out).not.toContain('abc.def-123')
    expect(out).toContain(`Bearer ${REDACTED} failed`)
  })

  it('blanks every string under a key named like a secret, at any depth, and no other', () => {
    const line = JSON.stringify({
      leaseToken: 'lease-1',
      lease: { token: 'lease-2', expiresAt: 'soon' },
      headers: { authorization: 'Token lease-3' },
      env: { PREFLIGHT_TOKEN: 'lease-4', DB_PASSWORD: 'lease-5' },
      tokenId: 'id-7',
      tokens: 3,
    })
    const out = JSON.parse(redact(line))
    expect(JSON.stringify(out)).not.toMatch(/lease-\d/)
    expect(out).toMatchObject({ lease: { token: REDACTED, expiresAt: 'soon' }, tokenId: 'id-7', tokens: 3 })
  })

  it("replaces the process's own secrets wherever they appear, also as JSON escapes them", () => {
    const out = redact(
      JSON.stringify({ msg: 'token process-token-0123456789 and quote"and\\slash-secret in a message' }),
    )
    expect(out).not.toContain('process-token-0123456789')
    expect(out).not.toContain('slash-secret')
    expect(JSON.parse(out).msg).toBe(`token ${REDACTED} and ${REDACTED} in a message`)
  })

  it('leaves short values alone: they would blank out ordinary words', () => {
    expect(redactor(['abc'])('{"msg":"abc"}')).toBe('{"msg":"abc"}')
  })
})
