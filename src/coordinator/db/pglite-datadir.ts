// The embedded database's first start. PGlite runs initdb on an empty data directory: 5 s of CPU (7 s
// and more on a busy machine). `npm run build` runs it once and keeps PGlite's dump of the new directory
// (4.5 MB gzipped) beside the compiled code, named by the PGlite version that made it; a first start
// with that same version loads the dump instead, in about a second. Either way the directory is made
// under a temporary name and renamed when whole: a first start killed half-way leaves nothing that
// looks like a database.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, isAbsolute, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gunzipSync } from 'node:zlib'
import { PGlite } from '@electric-sql/pglite'

// dist/assets/ beside the compiled code; the CLI's coordinator chunk (dist/src/cli/) and a clone run from
// its sources (tsx, the tests) read it by the second path
const ASSETS = [
  new URL('../../../assets/', import.meta.url),
  new URL('../../../dist/assets/', import.meta.url),
]
const IMAGE = /^pglite-initdb-(.+)\.tar\.gz$/

export type MadeFrom = 'image' | 'initdb'

export const isDataDir = (dir: string) => existsSync(join(dir, 'PG_VERSION'))

// Makes `dir` a new PGlite data directory. `starting` is told how, before the wait. `assets`: where
// to look for the image (the tests give their own).
export async function makeDataDir(
  to: string,
  starting?: (from: MadeFrom) => void,
  assets: URL[] = ASSETS,
): Promise<void> {
  const dir = resolve(to)
  if (existsSync(dir) && readdirSync(dir).length > 0)
    throw new Error(
      `${dir} is not empty and holds no PGlite database: move it away, or give another data directory`,
    )
  const image = await readImage(assets)
  starting?.(image ? 'image' : 'initdb')
  const building = `${dir}.new`
  await rm(building, { recursive: true, force: true })
  await mkdir(dirname(dir), { recursive: true })
  try {
    if (image) untar(gunzipSync(image), building)
    else {
      const pg = new PGlite(building)
      await pg.waitReady
      await pg.close()
    }
    if (!isDataDir(building)) throw new Error('the new data directory holds no PG_VERSION')
    // onto nothing, or onto an empty directory
    await rename(building, dir).catch((err: NodeJS.ErrnoException) => {
      if (!['EXDEV', 'EBUSY', 'ENOTDIR'].includes(err.code ?? '')) throw err
      throw new Error(
        `${dir} is a mount point or a link: mount or link the data directory (--data-dir) that holds it instead`,
      )
    })
  } catch (err) {
    await rm(building, { recursive: true, force: true })
    throw err
  }
}

// The tar PGlite's dumpDataDir writes: ustar headers, directories and regular files only, names under
// the data directory (checked: none leaves it), sizes within the archive. Read here rather than by
// PGlite's own loadDataDir, which starts PostgreSQL on it: with the close and the reopen, 1.3 s more.
// Synchronous: a thousand files, once, before the coordinator serves anything (a third of the time of
// awaiting each).
function untar(tar: Buffer, into: string): void {
  mkdirSync(into, { recursive: true, mode: 0o700 })
  let at = 0
  while (at + 512 <= tar.length && tar[at] !== 0) {
    const field = (from: number, to: number) =>
      tar.toString('latin1', at + from, at + to).replace(/\0.*$/s, '')
    if (field(257, 262) !== 'ustar') throw new Error(`the initdb image is not a ustar archive (at ${at})`)
    const prefix = field(345, 500)
    const name = prefix ? `${prefix}/${field(0, 100)}` : field(0, 100)
    const size = Number.parseInt(field(124, 136), 8)
    const mode = Number.parseInt(field(100, 108), 8) & 0o700
    const type = field(156, 157) || '0'
    const path = join(into, name)
    const inside = relative(into, path)
    if (inside === '..' || inside.startsWith('../') || isAbsolute(inside))
      throw new Error(`the initdb image names ${name}, outside its directory`)
    if (!(size >= 0) || at + 512 + size > tar.length)
      throw new Error(`the initdb image's entry ${name} has a size past its end`)
    if (type === '5') mkdirSync(path, { recursive: true, mode: mode || 0o700 })
    else if (type === '0') {
      mkdirSync(dirname(path), { recursive: true })
      writeFileSync(path, tar.subarray(at + 512, at + 512 + size), { mode: mode || 0o600 })
    } else throw new Error(`the initdb image holds an entry of type ${type} (${name})`)
    at += 512 + Math.ceil(size / 512) * 512
  }
  if (at + 1024 > tar.length) throw new Error('the initdb image ends before its end-of-archive blocks')
}

async function readImage(assets: URL[]): Promise<Buffer | undefined> {
  for (const dir of assets) {
    const image = await readFile(new URL(imageName(), dir)).catch(() => undefined)
    if (image) return image
  }
  return undefined
}

const imageName = (version = pgliteVersion()) => `pglite-initdb-${version}.tar.gz`

export function pgliteVersion(): string {
  const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite')
  const manifest = join(dirname(entry), '..', 'package.json')
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version
}

// `npm run build`: the image of this PGlite version in `assets` (made when absent; those of other
// versions removed). Answers its path.
export async function writeImage(assets = fileURLToPath(ASSETS[0] as URL)): Promise<string> {
  const name = imageName()
  const file = join(assets, name)
  await mkdir(assets, { recursive: true })
  for (const old of readdirSync(assets)) if (IMAGE.test(old) && old !== name) rmSync(join(assets, old))
  if (existsSync(file)) return file
  // as openPglite's, but for its buffer pool (a setting of each start, not of the directory)
  const pg = new PGlite()
  await pg.waitReady
  const dump = await pg.dumpDataDir('gzip')
  await pg.close()
  await writeFile(`${file}.tmp`, Buffer.from(await dump.arrayBuffer()))
  await rename(`${file}.tmp`, file)
  return file
}
