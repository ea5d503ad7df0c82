import { afterEach, describe, expect, it } from 'vitest'
import { createTestDatabase } from '../../support/db.js'

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
