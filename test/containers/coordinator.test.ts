// The coordinator image on the stand-in PostgreSQL, as compose.yaml runs it: the one-shot `migrate`, then
// the coordinator, which answers /readyz and turns healthy by the image's own HEALTHCHECK.
import postgres from 'postgres'
import {
  GenericContainer,
  Network,
  type StartedNetwork,
  type StartedTestContainer,
  Wait,
} from 'testcontainers'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readMigrations } from '../../src/coordinator/db/migrate.js'
import {
  DATABASE_URL,
  DB,
  images,
  inspect,
  start,
  startCoordinator,
  startPostgres,
  urlOf,
} from '../support/containers.js'

let network: StartedNetwork
let db: StartedTestContainer
const started: StartedTestContainer[] = []

beforeAll(async () => {
  network = await new Network().start()
  db = await startPostgres(network)
  started.push(db)
})

afterAll(async () => {
  for (const c of started.reverse()) await c.stop().catch(() => {})
  await network?.stop()
})

async function appliedMigrations(): Promise<string[]> {
  const url = `postgres://${DB.user}:${DB.password}@${db.getHost()}:${db.getMappedPort(5432)}/${DB.name}`
  const sql = postgres(url, { max: 1, onnotice: () => {} })
  try {
    return (await sql`SELECT name FROM preflight_migrations ORDER BY name`).map((r) => String(r.name))
  } finally {
    await sql.end()
  }
}

describe('the coordinator image on PostgreSQL', () => {
  it('applies every migration with the one-shot migrate command, and exits 0', async () => {
    const migrate = await start(
      'migrate',
      new GenericContainer(images().coordinator)
        .withNetwork(network)
        .withCommand(['migrate'])
        .withEnvironment({ DATABASE_URL })
        .withWaitStrategy(Wait.forOneShotStartup()),
    )
    started.push(migrate)
    expect((await inspect(migrate)).State.ExitCode).toBe(0)
    expect(await appliedMigrations()).toEqual(readMigrations().map((m) => m.name))
  })

  it('answers /readyz and becomes healthy by its HEALTHCHECK, as the non-root node user', async () => {
    const coordinator = await startCoordinator(network, Wait.forHealthCheck())
    started.push(coordinator)
    expect((await inspect(coordinator)).State.Health?.Status).toBe('healthy')
    const ready = await fetch(`${urlOf(coordinator)}/readyz`)
    expect(ready.status).toBe(200)
    expect((await coordinator.exec(['id', '-u'])).output.trim()).toBe('1000')
  })
})

// It carries PGlite (~27 MB) so that the image alone runs: a trial needs no database server.
describe('the coordinator image without a database URL', () => {
  it('runs on embedded PGlite in /app/.preflight', async () => {
    const alone = await start(
      'coordinator-pglite',
      new GenericContainer(images().coordinator)
        .withExposedPorts(8080)
        .withWaitStrategy(Wait.forHttp('/readyz', 8080)),
    )
    started.push(alone)
    expect((await fetch(`${urlOf(alone)}/readyz`)).status).toBe(200)
    expect((await alone.exec(['ls', '/app/.preflight'])).output.trim()).not.toBe('')
  })
})
