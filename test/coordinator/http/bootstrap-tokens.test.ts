// PREFLIGHT_BOOTSTRAP_TOKENS, read without zod: every role of the contract, nothing else, tokens long enough.
import { describe, expect, it } from 'vitest'
import { Role } from '../../../src/contract/index.js'
import { MIN_TOKEN_LENGTH, parseBootstrapTokens } from '../../../src/coordinator/http/bootstrap-tokens.js'

const TOKEN = 't'.repeat(MIN_TOKEN_LENGTH)

describe('parseBootstrapTokens', () => {
  it("takes each of the contract's roles, and skips empty entries and spaces", () => {
    const spec = ` ${Role.options.map((role) => `${role}:${TOKEN}`).join(' , ')},, `
    expect(parseBootstrapTokens(spec)).toEqual(Role.options.map((role) => ({ role, token: TOKEN })))
    expect(parseBootstrapTokens('')).toEqual([])
  })

  it('keeps a colon inside the token', () => {
    expect(parseBootstrapTokens(`admin:${TOKEN}:more`)).toEqual([{ role: 'admin', token: `${TOKEN}:more` }])
  })

  it.each([
    [
      'a role the contract does not have',
      `root:${TOKEN}`,
      /not role:token with a role of orchestrator, worker/,
    ],
    ['a role that only begins like one', `admins:${TOKEN}`, /not role:token/],
    ['a role in other case', `Admin:${TOKEN}`, /not role:token/],
    ["a name of Array's prototype", `includes:${TOKEN}`, /not role:token/],
    ['no role', `:${TOKEN}`, /not role:token/],
    ['no colon', TOKEN, /not role:token/],
    [
      'a token one character short',
      `worker:${TOKEN.slice(1)}`,
      /the worker token must be at least 16 characters/,
    ],
  ])('refuses %s, in one sentence', (_, spec, message) => {
    expect(() => parseBootstrapTokens(`operator:${TOKEN},${spec}`)).toThrow(message)
  })
})
