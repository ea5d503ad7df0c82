// `preflight coordinator [--port 8080 | PREFLIGHT_PORT] [--database-url URL] [--log-level L]` — migrates, seeds bootstrap
// tokens, serves until SIGINT/SIGTERM, then shuts down gracefully (the handler is idempotent).

import { type CoordinatorConfig, defaultConfig } from '../coordinator/config.js'
import { migrate } from '../coordinator/db/migrate.js'
import { syncBootstrapTokens } from '../coordinator/http/auth.js'
import { MIN_TOKEN_LENGTH, parseBootstrapTokens } from '../coordinator/http/bootstrap-tokens.js'
import { startServer } from '../coordinator/server.js'
import { createLog } from '../log/log.js'
import { durationFlag, durationSetting, intFlag, intSetting, settingOf } from './args.js'
import { openDatabase } from './database.js'
import { UsageError } from './errors.js'
import { COORDINATOR_FLAGS, DEFAULT_PORT, type Values } from './flags.js'
import { logOptions } from './log-options.js'
import { refuseServiceLink } from './service-links.js'

export async function run(values: Values<typeof COORDINATOR_FLAGS>): Promise<number> {
  const env = process.env
  // PREFLIGHT_PORT is what the image's HEALTHCHECK asks; PORT is the platforms' (Heroku, Cloud Run)
  const portSetting = settingOf(COORDINATOR_FLAGS, 'port', values)
  refuseServiceLink(portSetting, 'a port number')
  const port = intSetting(portSetting, 0, 65_535) ?? DEFAULT_PORT
  const config = configFrom(values)
  const tokens = bootstrapTokens(env.PREFLIGHT_BOOTSTRAP_TOKENS)
  config.metricsToken = metricsToken(env.PREFLIGHT_METRICS_TOKEN)
  const secrets = [...tokens.map((t) => t.token), ...(config.metricsToken ? [config.metricsToken] : [])]
  const log = createLog({ name: 'coordinator', ...logOptions(values), secrets })
  const db = await openDatabase(
    {
      url: values['database-url'],
      dataDir: values['data-dir'],
      statementTimeoutMs: durationFlag(
        values['statement-timeout-ms'],
        'statement-timeout-ms',
        100,
        3_600_000,
      ),
    },
    (line) => log.info(line),
  )
  try {
    const applied = await migrate(db)
    if (applied.length) log.info(`applied migrations ${applied.join(', ')}`, { migrations: applied })
    const { dropped } = await syncBootstrapTokens(db.orm, tokens, { notify: db.kind === 'postgres' })
    if (dropped) log.info(`deleted ${dropped} bootstrap token(s) no longer in PREFLIGHT_BOOTSTRAP_TOKENS`)
    const server = await startServer({ db, port, host: values.host, config, log })
    log.info(`coordinator listening on ${server.url}`, { url: server.url })
    await untilSignal()
    log.info('shutting down')
    await server.stop()
    return 0
  } finally {
    await db.close()
  }
}

function configFrom(values: Values<typeof COORDINATOR_FLAGS>): Partial<CoordinatorConfig> {
  const config: Partial<CoordinatorConfig> = {}
  type NumberKey = {
    [K in keyof CoordinatorConfig]-?: CoordinatorConfig[K] extends number ? K : never
  }[keyof CoordinatorConfig]
  const set = (key: NumberKey, n: number | undefined) => {
    if (n !== undefined) config[key] = n
  }
  set('leaseMs', durationSetting(settingOf(COORDINATOR_FLAGS, 'lease-ms', values), 100, 86_400_000))
  set('maxAttempts', intSetting(settingOf(COORDINATOR_FLAGS, 'max-attempts', values), 1, 1000))
  set('sweepIntervalMs', durationFlag(values['sweep-ms'], 'sweep-ms', 10, 3_600_000))
  set('claimWaitCapMs', durationFlag(values['claim-wait-cap-ms'], 'claim-wait-cap-ms', 0, 600_000))
  set('priorityAgingMs', durationFlag(values['priority-aging-ms'], 'priority-aging-ms', 1_000, 86_400_000))
  set('requestTimeoutMs', durationFlag(values['request-timeout-ms'], 'request-timeout-ms', 100, 3_600_000))
  set('maxConnections', intFlag(values['max-connections'], 'max-connections', 1, 1_000_000))
  set('headersTimeoutMs', durationFlag(values['headers-timeout-ms'], 'headers-timeout-ms', 100, 3_600_000))
  set('receiveTimeoutMs', durationFlag(values['receive-timeout-ms'], 'receive-timeout-ms', 100, 3_600_000))
  set(
    'keepAliveTimeoutMs',
    durationFlag(values['keep-alive-timeout-ms'], 'keep-alive-timeout-ms', 100, 3_600_000),
  )
  set('longPollsPerToken', intFlag(values['long-polls-per-token'], 'long-polls-per-token', 1, 1_000_000))
  set('streamsPerToken', intFlag(values['streams-per-token'], 'streams-per-token', 1, 1_000_000))
  // the headers are part of the request: Node refuses a headers timeout longer than the whole's
  const { headersTimeoutMs, receiveTimeoutMs } = { ...defaultConfig, ...config }
  if (headersTimeoutMs > receiveTimeoutMs)
    throw new UsageError(
      `--headers-timeout-ms (${headersTimeoutMs}) must not be over --receive-timeout-ms (${receiveTimeoutMs})`,
    )
  return config
}

function bootstrapTokens(spec: string | undefined) {
  try {
    return parseBootstrapTokens(spec ?? '')
  } catch (err) {
    throw new UsageError((err as Error).message)
  }
}

function metricsToken(token: string | undefined): string | undefined {
  if (token === undefined || token === '') return undefined
  if (token.length < MIN_TOKEN_LENGTH || /\s/.test(token)) {
    throw new UsageError(
      `PREFLIGHT_METRICS_TOKEN must be at least ${MIN_TOKEN_LENGTH} characters, without spaces`,
    )
  }
  return token
}

// Resolves on the first SIGINT or SIGTERM; later signals during shutdown change nothing.
function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    const handler = () => {
      process.off('SIGINT', handler)
      process.off('SIGTERM', handler)
      process.on('SIGINT', ignore)
      process.on('SIGTERM', ignore)
      resolve()
    }
    const ignore = () => {}
    process.on('SIGINT', handler)
    process.on('SIGTERM', handler)
  })
}
