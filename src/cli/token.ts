// `preflight token create --role R [--label L] [--expires-in 90d]` prints a new token once (stores its
// hash); `preflight token list [--format text|json]` shows every token but never its secret;
// `preflight token revoke ID` revokes one, at once on every running coordinator. Against the database
// (--database-url / DATABASE_URL, else ./.preflight), or with --coordinator URL through that
// coordinator's admin routes (an admin token): the way in while a coordinator holds its embedded
// database (npm start).

import { Role, type TokenView } from '../contract/index.js'
import type { Database } from '../coordinator/db/client.js'
import { migrate } from '../coordinator/db/migrate.js'
import { listTokens, revokeToken } from '../coordinator/db/tokens.js'
import { createToken } from '../coordinator/http/auth.js'
import { type Api, ApiRefusal, withClient } from './api.js'
import { coordinatorUrl, say, tokenFrom } from './args.js'
import { openDatabase } from './database.js'
import { parseDuration } from './duration.js'
import { UsageError } from './errors.js'
import type { TOKEN_CREATE_FLAGS, TOKEN_FLAGS, TOKEN_LIST_FLAGS, Values } from './flags.js'

type CreateFlags = Values<typeof TOKEN_CREATE_FLAGS>
type Where = Values<typeof TOKEN_FLAGS>

export const create = (values: CreateFlags) => run(values, creation(values))
export const list = (values: Values<typeof TOKEN_LIST_FLAGS>) => run(values, listing(values))
export const revoke = (values: Where, id: string) => run(values, revocation(id))

// The verb's arguments were checked (it is a Command) before the database or the coordinator is asked.
async function run(values: Where, command: Command): Promise<number> {
  if (values.coordinator !== undefined) {
    if (values['database-url'] !== undefined)
      throw new UsageError('give --coordinator or --database-url, not both')
    return command({
      api: { base: coordinatorUrl(values.coordinator), token: tokenFrom(values.token, 'an admin') },
    })
  }
  const db = await openDatabase({ url: values['database-url'], dataDir: values['data-dir'] }, say)
  try {
    await migrate(db)
    return await command({ db })
  } finally {
    await db.close()
  }
}

// A token store: the database itself, or a coordinator's admin routes.
type Store = { db: Database; api?: undefined } | { api: Api; db?: undefined }

// Each verb checks its arguments, then runs against the database.
type Command = (store: Store) => Promise<number>

function creation(values: CreateFlags): Command {
  const role = Role.safeParse(values.role)
  if (!role.success) throw new UsageError(`--role must be one of ${Role.options.join(', ')}`)
  const expiresIn = values['expires-in'] === undefined ? undefined : durationMs(values['expires-in'])
  return async ({ db, api }) => {
    const expiresAt = expiresIn === undefined ? undefined : new Date(Date.now() + expiresIn)
    const { id, token } = db
      ? await createToken(db.orm, role.data, { label: values.label, expiresAt })
      : await withClient(api, (client) =>
          client.createToken({
            role: role.data,
            ...(values.label === undefined ? {} : { label: values.label }),
            ...(expiresAt ? { expiresAt: expiresAt.toISOString() } : {}),
          }),
        )
    say(`token ${id} (${role.data}) created${expiresAt ? `, expires ${expiresAt.toISOString()}` : ''}`)
    process.stdout.write(`${token}\n`)
    return 0
  }
}

function listing(values: Values<typeof TOKEN_LIST_FLAGS>): Command {
  const format = values.format ?? 'text'
  if (format !== 'text' && format !== 'json') throw new UsageError(`--format must be text or json`)
  return async ({ db, api }) => {
    const items: TokenView[] = []
    let cursor: string | undefined
    do {
      const query = { limit: 500, ...(cursor === undefined ? {} : { cursor }) }
      const page = db
        ? await listTokens(db.orm, query)
        : await withClient(api, (client) => client.listTokens(query))
      items.push(...page.items)
      cursor = page.nextCursor ?? undefined
    } while (cursor)
    process.stdout.write(format === 'json' ? `${JSON.stringify(items, null, 2)}\n` : formatTokens(items))
    return 0
  }
}

function revocation(idText: string): Command {
  if (!/^[1-9][0-9]{0,14}$/.test(idText))
    throw new UsageError(`a token id is a whole number, got "${idText}"`)
  const id = Number(idText)
  return async ({ db, api }) => {
    const revoked = db ? await revokeToken(db.orm, id, db.kind === 'postgres') : await revokedBy(api, id)
    if (!revoked) {
      process.stderr.write(`preflight: no token with id ${id}\n`)
      return 1
    }
    process.stdout.write(
      `revoked token ${id} (${revoked.role}${revoked.label ? `, ${revoked.label}` : ''})\n`,
    )
    return 0
  }
}

// The coordinator's revocation; undefined for a token it does not know.
async function revokedBy(api: Api, id: number): Promise<TokenView | undefined> {
  try {
    return await withClient(api, (client) => client.revokeToken(String(id)))
  } catch (err) {
    if (err instanceof ApiRefusal && err.status === 404) return undefined
    throw err
  }
}

// "90d", "12h", "30m", "3600s" → milliseconds: a unit is required (a bare 90 could mean any of them).
function durationMs(text: string): number {
  const ms = parseDuration(text, { bare: false })
  if (ms === undefined || ms < 1_000 || ms > MAX_EXPIRES_MS)
    throw new UsageError(`--expires-in must be a number and a unit (s, m, h, d), e.g. 90d; got "${text}"`)
  return ms
}

// 999999d, the bound the flag had before it shared the CLI's duration parser
const MAX_EXPIRES_MS = 999_999 * 86_400_000

function formatTokens(items: TokenView[]): string {
  const header = ['ID', 'ROLE', 'STATE', 'CREATED', 'LAST USED', 'EXPIRES', 'LABEL']
  const table = [
    header,
    ...items.map((t) => [
      String(t.id),
      t.role,
      t.state,
      t.createdAt,
      t.lastUsedAt ?? '-',
      t.expiresAt ?? '-',
      t.label ?? '',
    ]),
  ]
  const widths = header.map((_, i) => Math.max(...table.map((row) => (row[i] ?? '').length)))
  return table
    .map(
      (row) =>
        `${row
          .map((cell, i) => cell.padEnd(widths[i] ?? 0))
          .join('  ')
          .trimEnd()}\n`,
    )
    .join('')
}
