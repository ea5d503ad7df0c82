// Opens the database a command was given: --database-url / DATABASE_URL, else embedded PGlite under
// ./.preflight (said on stderr), guarded by a lock file since PGlite allows one process per directory.
import { join, resolve } from 'node:path'
import { connectPostgres, type Database, openPglite } from '../coordinator/db/client.js'
import { setting } from './args.js'
import { UsageError } from './errors.js'
import { DB_FLAGS } from './flags.js'
import { takePidLock } from './pid-lock.js'

const DEFAULT_DATA_DIR = DB_FLAGS['data-dir'].default

export interface DatabaseChoice {
  url?: string | undefined
  dataDir?: string | undefined
  statementTimeoutMs?: number | undefined
}

export async function openDatabase(choice: DatabaseChoice, say: (line: string) => void): Promise<Database> {
  const url = setting('database-url', choice.url, [...DB_FLAGS['database-url'].env])?.value
  const timeout = { statementTimeoutMs: choice.statementTimeoutMs }
  if (url) {
    if (!/^postgres(ql)?:\/\//.test(url))
      throw new UsageError('the database URL must start with postgres:// or postgresql://')
    return connectPostgres(url, timeout)
  }
  const dir = resolve(choice.dataDir ?? DEFAULT_DATA_DIR)
  say(`no --database-url or DATABASE_URL: using embedded PGlite under ${dir}`)
  const release = lockDataDir(dir)
  try {
    const pgdata = join(dir, 'pgdata')
    const db = await openPglite(pgdata, {
      ...timeout,
      making: (from) =>
        say(
          from === 'image'
            ? `first start: making the database in ${pgdata} from the build's initdb image`
            : `first start: making the database in ${pgdata} with initdb (seconds; \`npm run build\` keeps an image that takes one)`,
        ),
    })
    return { ...db, close: () => db.close().finally(release) }
  } catch (err) {
    release()
    throw err
  }
}

function lockDataDir(dir: string): () => void {
  const lock = takePidLock(join(dir, 'lock'))
  if (typeof lock === 'function') return lock
  throw new UsageError(
    `${dir} is in use by another preflight process (pid ${lock.heldBy}); stop it or give --database-url` +
      ' (for `token`: --coordinator URL and an admin token, through the running coordinator)',
  )
}
