// `preflight migrate [--database-url URL]` — applies migrations/*.sql (safe twice and concurrently).
import { migrate } from '../coordinator/db/migrate.js'
import { say } from './args.js'
import { openDatabase } from './database.js'
import type { DB_FLAGS, Values } from './flags.js'

export async function run(values: Values<typeof DB_FLAGS>): Promise<number> {
  const db = await openDatabase({ url: values['database-url'], dataDir: values['data-dir'] }, say)
  try {
    const applied = await migrate(db)
    process.stdout.write(applied.length ? `applied ${applied.join(', ')}\n` : 'up to date\n')
    return 0
  } finally {
    await db.close()
  }
}
