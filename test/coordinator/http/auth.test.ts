// syncBootstrapTokens: PREFLIGHT_BOOTSTRAP_TOKENS is the whole list of bootstrap tokens at each start.
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { rows } from '../../../src/coordinator/db/client.js'
import { findActiveToken, revokeToken } from '../../../src/coordinator/db/tokens.js'
import { createToken, hashToken, syncBootstrapTokens } from '../../../src/coordinator/http/auth.js'
import { createTestDatabase, type TestDatabase } from '../../support/db.js'

const A = 'bootstrap-token-a-0123456789'
const B = 'bootstrap-token-b-0123456789'

describe('syncBootstrapTokens', () => {
  let t: TestDatabase
  beforeAll(async () => {
    t = await createTestDatabase()
  })
  afterAll(() => t.drop())

  const roleOf = async (token: string) => (await findActiveToken(t.db.orm, hashToken(token)))?.role

  it('seeds the listed tokens and deletes those a previous start seeded but no longer lists', async () => {
    await syncBootstrapTokens(t.db.orm, [{ role: 'orchestrator', token: A }])
    expect(await roleOf(A)).toBe('orchestrator')
    const { dropped } = await syncBootstrapTokens(t.db.orm, [{ role: 'worker', token: B }])
    expect(dropped).toBe(1)
    expect(await roleOf(A)).toBeUndefined()
    expect(await roleOf(B)).toBe('worker')
  })

  it('deletes every bootstrap token when the list is empty, and leaves minted tokens alone', async () => {
    const minted = await createToken(t.db.orm, 'operator')
    await syncBootstrapTokens(t.db.orm, [])
    expect(await roleOf(B)).toBeUndefined()
    expect(await roleOf(minted.token)).toBe('operator')
  })

  it('gives a listed token the role the list gives it', async () => {
    await syncBootstrapTokens(t.db.orm, [{ role: 'worker', token: A }])
    await syncBootstrapTokens(t.db.orm, [{ role: 'operator', token: A }])
    expect(await roleOf(A)).toBe('operator')
  })

  it('keeps a revoked bootstrap token revoked, also while it is still listed', async () => {
    await syncBootstrapTokens(t.db.orm, [{ role: 'worker', token: B }])
    const [row] = await rows<{ id: string }>(
      t.db.orm,
      sql`SELECT id FROM api_tokens WHERE token_hash = ${hashToken(B)}`,
    )
    await revokeToken(t.db.orm, Number(row?.id), false)
    await syncBootstrapTokens(t.db.orm, [{ role: 'worker', token: B }])
    expect(await roleOf(B)).toBeUndefined()
  })
})
