// A claim is read with the contract's schema: what does not parse is never taken for what its type says.
import { describe, expect, it } from 'vitest'
import { readClaim, refusalReport, type Unreadable } from '../../worker/claim.js'

const ID = '00000000-0000-4000-8000-000000000001'
const LEASE = { token: 'lease-token', expiresAt: '2026-01-01T00:00:00.000Z' }

function answer(
  subagent: unknown = { name: 'fixer', agent: { command: ['true'] } },
): Record<string, unknown> {
  return {
    dispatch: { id: ID, attempt: 2, workspace: { path: '/ws' }, subagent: { name: 'fixer', version: 3 } },
    subagent,
    lease: LEASE,
  }
}

describe('readClaim', () => {
  it('reads a claim of the contract, dropping what the contract does not name', () => {
    const read = readClaim({ ...answer(), surplus: true })
    expect(read).toEqual({ ok: true, claim: answer() })
  })

  it.each([
    ['nothing', undefined],
    ['a string', 'claim'],
    ['no lease', { ...answer(), lease: undefined }],
    [
      'a dispatch id that is not a uuid',
      { ...answer(), dispatch: { ...(answer().dispatch as object), id: 'x' } },
    ],
    ['attempt 0', { ...answer(), dispatch: { ...(answer().dispatch as object), attempt: 0 } }],
    ['a lease without a token', { ...answer(), lease: { expiresAt: LEASE.expiresAt } }],
  ])('cannot read the fence of %s', (_name, raw) => {
    expect(readClaim(raw)).toBeUndefined()
  })

  it('keeps the fence, the contextRequires as it arrived and what did not parse for a definition it cannot read', () => {
    const requires = { git: true, nix: ['hello'] }
    const read = readClaim(answer({ name: 'fixer', agent: { command: ['true'] }, contextRequires: requires }))
    expect(read).toEqual({
      ok: false,
      claim: {
        dispatch: { id: ID, attempt: 2 },
        lease: LEASE,
        requires,
        problem: expect.stringMatching(/^subagent\.contextRequires\.git: .+; subagent\.contextRequires: .+/),
      },
    })
  })

  it('reads a workspace it cannot parse as an unreadable claim too', () => {
    const raw = answer()
    raw.dispatch = { ...(raw.dispatch as object), workspace: { path: 'relative' } }
    expect(readClaim(raw)).toMatchObject({
      ok: false,
      claim: { problem: expect.stringContaining('dispatch.workspace.path') },
    })
  })

  it.each([
    ['no definition', undefined],
    ['a definition that is not an object', 'fixer'],
    ['a null definition', null],
  ])('reads %s as declaring nothing it can name', (_name, subagent) => {
    expect(readClaim({ ...answer(), subagent })).toMatchObject({ ok: false, claim: { requires: undefined } })
  })
})

describe('refusalReport', () => {
  const unreadable = (requires: unknown): Unreadable => ({
    dispatch: { id: ID, attempt: 2 },
    lease: LEASE,
    requires,
    problem: 'subagent.agent.command: Invalid input',
  })
  const AT = '2026-02-03T04:05:06.000Z'

  it('reports every requirement it can name as error invalid-claim, and the outcome error', () => {
    expect(refusalReport(unreadable({ exec: ['sh'], git: true }), AT)).toEqual({
      outcome: 'error',
      declared: true,
      results: [
        {
          kind: 'exec',
          requirement: 'sh',
          status: 'error',
          reason: 'invalid-claim',
          observed: { problem: 'subagent.agent.command: Invalid input' },
          durationMs: 0,
        },
        {
          kind: 'git',
          requirement: 'true',
          status: 'error',
          reason: 'invalid-claim',
          observed: { problem: 'subagent.agent.command: Invalid input' },
          durationMs: 0,
        },
      ],
      startedAt: AT,
      finishedAt: AT,
    })
  })

  it.each([undefined, 'x', null, ['paths']])(
    'is error, never met, when no requirement can be named (%j)',
    (requires) => {
      expect(refusalReport(unreadable(requires), AT)).toEqual({
        outcome: 'error',
        declared: false,
        results: [],
        startedAt: AT,
        finishedAt: AT,
      })
    },
  )
})
