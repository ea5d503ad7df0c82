import { sql } from 'drizzle-orm'
import postgres from 'postgres'
import { afterEach, describe, expect, it } from 'vitest'
import { readMigrations } from '../../../src/coordinator/db/migrate.js'
import { syncBootstrapTokens } from '../../../src/coordinator/http/auth.js'
import { createTestApp } from '../../support/app.js'
import { createTestDatabase } from '../../support/db.js'
import { queueDispatch } from '../../support/fixtures.js'

describe('test database selection', () => {
  const saved = {
    test: process.env.TEST_DATABASE_URL,
    db: process.env.DATABASE_URL,
    docker: process.env.DOCKER_HOST,
    local: process.env.PREFLIGHT_TEST_LOCAL_URL,
  }
  afterEach(() => {
    for (const [name, value] of [
      ['TEST_DATABASE_URL', saved.test],
      ['DATABASE_URL', saved.db],
      ['DOCKER_HOST', saved.docker],
      ['PREFLIGHT_TEST_LOCAL_URL', saved.local],
    ] as const) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
  })

  it('fails with a message naming TEST_DATABASE_URL when no database is configured', async () => {
    delete process.env.TEST_DATABASE_URL
    delete process.env.DATABASE_URL
    delete process.env.DOCKER_HOST
    process.env.PREFLIGHT_TEST_LOCAL_URL = 'postgres://postgres@127.0.0.1:1/postgres' // nothing listens there
    // With a Docker engine present the testcontainers branch runs; without the optional package it
    // fails with the same advice. Either way: a clear failure, never a silent skip.
    await expect(createTestDatabase()).rejects.toThrow(/set TEST_DATABASE_URL/)
  })
})

describe('test databases used again', () => {
  const oid = async (url: string) => {
    const sql = postgres(url, { max: 1 })
    try {
      const [row] = await sql<
        { oid: number }[]
      >`SELECT oid::int FROM pg_database WHERE datname = current_database()`
      return row?.oid
    } finally {
      await sql.end()
    }
  }

  it('gives the next suite the dropped database emptied, under a name its old connections cannot reach', async () => {
    const first = await createTestDatabase()
    await syncBootstrapTokens(first.db.orm, [{ role: 'admin', token: 'reused-admin-token-0123456789abcdef' }])
    const firstOid = await oid(first.url as string)
    const lingering = postgres(first.url as string, { max: 1, onnotice: () => {} })
    await lingering`SELECT 1`
    await first.drop()
    const second = await createTestDatabase()
    try {
      // in a run (PREFLIGHT_TEST_RUN, from the global setup) the same database; else a new one
      if (process.env.PREFLIGHT_TEST_RUN) expect(await oid(second.url as string)).toBe(firstOid)
      expect(second.url).not.toBe(first.url)
      const tokens = await second.db.orm.execute(sql`SELECT count(*)::int AS n FROM api_tokens`)
      expect(tokens).toEqual([{ n: 0 }])
      // its identities start again: the next token is id 1
      await syncBootstrapTokens(second.db.orm, [
        { role: 'admin', token: 'reused-admin-token-0123456789abcdef' },
      ])
      const ids = await second.db.orm.execute(sql`SELECT id::int FROM api_tokens`)
      expect(ids).toEqual([{ id: 1 }])
      const applied = await second.db.orm.execute(sql`SELECT count(*)::int AS n FROM preflight_migrations`)
      expect(applied).toEqual([{ n: readMigrations().length }])
      // the connection a suite left open was ended, and cannot come back to the old name
      await expect(lingering`SELECT 1`).rejects.toThrow()
    } finally {
      await lingering.end({ timeout: 1 })
      await second.drop()
    }
  })

  // dispatches reference subagent_versions without a cascade: emptied in the wrong order, the kept
  // database could not be emptied, and would be dropped and made anew (seen so: a new oid)
  it('empties a kept database whose dispatches reference their definitions', async () => {
    const first = await createTestApp()
    await queueDispatch(first)
    const firstOid = await oid(first.t.url as string)
    await first.close()
    const second = await createTestDatabase()
    try {
      if (process.env.PREFLIGHT_TEST_RUN) expect(await oid(second.url as string)).toBe(firstOid)
      const left = await second.db.orm.execute(
        sql`SELECT (SELECT count(*) FROM dispatches)::int AS d, (SELECT count(*) FROM subagent_versions)::int AS s`,
      )
      expect(left).toEqual([{ d: 0, s: 0 }])
    } finally {
      await second.drop()
    }
  })

  it('makes a database whose commits do not wait for the disk, on every connection to it', async () => {
    const t = await createTestDatabase()
    const other = postgres(t.url as string, { max: 1 })
    try {
      expect(await other`SHOW synchronous_commit`).toEqual([{ synchronous_commit: 'off' }])
    } finally {
      await other.end()
      await t.drop()
    }
  })

  it('drops a database whose recorded migrations are not the current set, and the next suite gets a new one', async () => {
    const first = await createTestDatabase()
    const firstOid = await oid(first.url as string)
    await first.db.orm.execute(
      sql`DELETE FROM preflight_migrations WHERE name = ${readMigrations()[0]?.name}`,
    )
    await first.drop()
    const second = await createTestDatabase()
    try {
      expect(await oid(second.url as string)).not.toBe(firstOid)
      const applied = await second.db.orm.execute(sql`SELECT count(*)::int AS n FROM preflight_migrations`)
      expect(applied).toEqual([{ n: readMigrations().length }])
    } finally {
      await second.drop()
    }
  })
})
