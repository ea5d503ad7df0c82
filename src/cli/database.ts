// Opens the database a command was given: --database-url / DATABASE_URL, else embedded PGlite under
// ./.preflight (said on stderr), guarded by a lock file since PGlite allows one process per directory.
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { connectPostgres, type Database, openPglite } from '../coordinator/db/client.js'
import { UsageError } from './errors.js'

const DEFAULT_DATA_DIR = '.preflight'

export interface DatabaseChoice {
  url?: string | undefined
  dataDir?: string | undefined
  statementTimeoutMs?: number | undefined
}

export async function openDatabase(choice: DatabaseChoice, say: (line: string) => void): Promise<Database> {
  const url = choice.url ?? process.env.DATABASE_URL
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
    const db = await openPglite(join(dir, 'pgdata'), timeout)
    return { ...db, close: () => db.close().finally(release) }
  } catch (err) {
    release()
    throw err
  }
}

function lockDataDir(dir: string): () => void {
  mkdirSync(dir, { recursive: true })
  const file = join(dir, 'lock')
  for (let tries = 0; tries < 2; tries++) {
    try {
      const fd = openSync(file, 'wx')
      writeSync(fd, String(process.pid))
      closeSync(fd)
      return () => rmSync(file, { force: true })
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
      const holder = Number(readFileSync(file, 'utf8'))
      if (alive(holder)) {
        throw new UsageError(
          `${dir} is in use by another preflight process (pid ${holder}); stop it or give --database-url`,
        )
      }
      rmSync(file, { force: true })
    }
  }
  throw new UsageError(`could not lock ${dir}`)
}

function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}
