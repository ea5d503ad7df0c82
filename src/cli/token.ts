// `preflight token create --role R [--label L] [--expires-in 90d]` prints a new token once (stores its
// hash); `preflight token list [--format text|json]` shows every token but never its secret;
// `preflight token revoke ID` revokes one, at once on every running coordinator. All against the
// database (--database-url / DATABASE_URL, else ./.preflight), as the coordinator's admin routes are.

import { Role, type TokenView } from '../contract/index.js'
import type { Database } from '../coordinator/db/client.js'
import { migrate } from '../coordinator/db/migrate.js'
import { listTokens, revokeToken } from '../coordinator/db/tokens.js'
import { createToken } from '../coordinator/http/auth.js'
import { say } from './args.js'
import type { DB_FLAGS, TOKEN_CREATE_FLAGS, TOKEN_LIST_FLAGS, Values } from './commands.js'
import { openDatabase } from './database.js'
import { parseDuration } from './duration.js'
import { UsageError } from './errors.js'

type CreateFlags = Values<typeof TOKEN_CREATE_FLAGS>
type DbFlags = Values<typeof DB_FLAGS>

export const create = (values: CreateFlags) => withDatabase(values, creation(values))
export const list = (values: Values<typeof TOKEN_LIST_FLAGS>) => withDatabase(values, listing(values))
export const revoke = (values: DbFlags, id: string) => withDatabase(values, revocation(id))

// The verb's arguments were checked (it is a Command) before the database is opened.
async function withDatabase(values: DbFlags, command: Command): Promise<number> {
  const db = await openDatabase({ url: values['database-url'], dataDir: values['data-dir'] }, say)
  try {
    await migrate(db)
    return await command(db)
  } finally {
    await db.close()
  }
}

// Each verb checks its arguments, then runs against the database.
type Command = (db: Database) => Promise<number>

function creation(values: CreateFlags): Command {
  const role = Role.safeParse(values.role)
  if (!role.success) throw new UsageError(`--role must be one of ${Role.options.join(', ')}`)
  const expiresIn = values['expires-in'] === undefined ? undefined : durationMs(values['expires-in'])
  return async (db) => {
    const expiresAt = expiresIn === undefined ? undefined : new Date(Date.now() + expiresIn)
    const { id, token } = await createToken(db.orm, role.data, { label: values.label, expiresAt })
    say(`token ${id} (${role.data}) created${expiresAt ? `, expires ${expiresAt.toISOString()}` : ''}`)
    process.stdout.write(`${token}\n`)
    return 0
  }
}

function listing(values: Values<typeof TOKEN_LIST_FLAGS>): Command {
  const format = values.format ?? 'text'
  if (format !== 'text' && format !== 'json') throw new UsageError(`--format must be text or json`)
  return async (db) => {
    const items: TokenView[] = []
    let cursor: string | undefined
    do {
      const page = await listTokens(db.orm, { limit: 500, cursor })
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
  return async (db) => {
    const revoked = await revokeToken(db.orm, id, db.kind === 'postgres')
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
