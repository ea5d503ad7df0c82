// `preflight token create --role R [--label L] [--database-url URL]` — prints a new token once; stores its hash.
import { createToken } from '../auth.js'
import { Role } from '../contract/api.js'
import { migrate } from '../db/migrate.js'
import { parseFlags, say } from './args.js'
import { openDatabase } from './database.js'
import { UsageError } from './errors.js'

export async function run(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(
    args,
    {
      role: { type: 'string' },
      label: { type: 'string' },
      'database-url': { type: 'string' },
      'data-dir': { type: 'string' },
    },
    true,
  )
  if (positionals.length !== 1 || positionals[0] !== 'create') {
    throw new UsageError('usage: preflight token create --role orchestrator|worker|operator|admin')
  }
  const role = Role.safeParse(values.role)
  if (!role.success) throw new UsageError(`--role must be one of ${Role.options.join(', ')}`)
  const db = await openDatabase({ url: values['database-url'], dataDir: values['data-dir'] }, say)
  try {
    await migrate(db)
    process.stdout.write(`${await createToken(db.orm, role.data, values.label)}\n`)
    return 0
  } finally {
    await db.close()
  }
}
