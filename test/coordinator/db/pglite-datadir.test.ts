// The embedded database's first start: a new data directory made from the initdb image `npm run build`
// keeps (dist/assets), or by initdb when there is none of this PGlite version; made whole or not at all.
import { existsSync } from 'node:fs'
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { gunzipSync, gzipSync } from 'node:zlib'
import { PGlite } from '@electric-sql/pglite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  isDataDir,
  type MadeFrom,
  makeDataDir,
  pgliteVersion,
  writeImage,
} from '../../../src/coordinator/db/pglite-datadir.js'

const BUILT = join(import.meta.dirname, '..', '..', '..', 'dist', 'assets')
const IMAGE = `pglite-initdb-${pgliteVersion()}.tar.gz`

let root: string
let n = 0
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'preflight-datadir-'))
})
afterAll(() => rm(root, { recursive: true, force: true }))

// a fresh directory of the test's, and an assets directory (as a URL, as the module takes them)
async function place(files: Record<string, Buffer> = {}) {
  const dir = join(root, String(++n))
  const assets = join(dir, 'assets')
  await mkdir(assets, { recursive: true })
  for (const [name, body] of Object.entries(files)) await writeFile(join(assets, name), body)
  return { pgdata: join(dir, 'pgdata'), assets: [pathToFileURL(`${assets}/`)] }
}

// A ustar archive, gzipped: enough for the reader (it keeps no checksum). An entry's name may carry a
// prefix (`prefix//name`) and a type (regular file unless given).
function tarOf(...entries: [name: string, body: string, type?: string][]): Buffer {
  const blocks = entries.flatMap(([path, body, type = '0']) => {
    const [prefix, name] = path.includes('//') ? path.split('//') : ['', path]
    const header = Buffer.alloc(512)
    header.write(name ?? '', 0, 'latin1')
    header.write('0000600\0', 100, 'latin1')
    header.write(`${body.length.toString(8).padStart(11, '0')}\0`, 124, 'latin1')
    header.write(type, 156, 'latin1')
    header.write('ustar\u000000', 257, 'latin1')
    header.write(prefix ?? '', 345, 'latin1')
    const data = Buffer.alloc(Math.ceil(body.length / 512) * 512)
    data.write(body, 'latin1')
    return [header, data]
  })
  return gzipSync(Buffer.concat([...blocks, Buffer.alloc(1024)]))
}

// A one-file image (PG_VERSION) cut after `bytes`, or with `text` written over its header at `at`.
const plain = () => gunzipSync(tarOf(['/PG_VERSION', '17\n']))
const cut = (bytes: number) => gzipSync(plain().subarray(0, bytes))
function patched(at: number, text: string): Buffer {
  const tar = plain()
  tar.write(text, at, 'latin1')
  return gzipSync(tar)
}

// Told how, then stopped before any work: what a first start would choose.
async function choice(assets: URL[], pgdata: string): Promise<MadeFrom | undefined> {
  let told: MadeFrom | undefined
  await expect(
    makeDataDir(
      pgdata,
      (from) => {
        told = from
        throw new Error('chosen')
      },
      assets,
    ),
  ).rejects.toThrow('chosen')
  return told
}

describe('a first start of the embedded database', () => {
  it('makes the data directory from the image the build keeps, and PGlite opens it', async () => {
    expect(existsSync(join(BUILT, IMAGE)), `${IMAGE} in dist/assets: npm run build makes it`).toBe(true)
    const { pgdata } = await place()
    // a leftover of a first start killed half-way, replaced
    await mkdir(`${pgdata}.new`, { recursive: true })
    await writeFile(`${pgdata}.new/half`, 'x')
    const told: MadeFrom[] = []
    await makeDataDir(pgdata, (from) => told.push(from))
    expect(told).toEqual(['image'])
    expect(isDataDir(pgdata)).toBe(true)
    expect(existsSync(`${pgdata}.new`)).toBe(false)
    expect(existsSync(join(pgdata, 'half'))).toBe(false)
    const pg = new PGlite(pgdata)
    try {
      expect((await pg.query<{ v: number }>('SELECT 40 + 2 AS v')).rows).toEqual([{ v: 42 }])
    } finally {
      await pg.close()
    }
  })

  it("runs initdb when the only image is another PGlite version's", async () => {
    const { assets, pgdata } = await place({ 'pglite-initdb-0.0.1.tar.gz': tarOf(['/PG_VERSION', '9\n']) })
    expect(await choice(assets, pgdata)).toBe('initdb')
    expect(existsSync(pgdata)).toBe(false)
  })

  it('leaves no data directory when the image cannot be read', async () => {
    const { assets, pgdata } = await place({ [IMAGE]: Buffer.from('not gzip') })
    await expect(makeDataDir(pgdata, undefined, assets)).rejects.toThrow()
    expect(existsSync(pgdata)).toBe(false)
    expect(existsSync(`${pgdata}.new`)).toBe(false)
  })

  it('refuses an image entry that would leave the directory, and writes nothing outside it', async () => {
    // after a good entry: a directory half made is not left under the final name
    const { assets, pgdata } = await place({
      [IMAGE]: tarOf(['/PG_VERSION', '17\n'], ['/../escaped', 'planted']),
    })
    await expect(makeDataDir(pgdata, undefined, assets)).rejects.toThrow(/outside its directory/)
    expect(existsSync(join(pgdata, '..', 'escaped'))).toBe(false)
    expect(existsSync(pgdata)).toBe(false)
    expect(existsSync(`${pgdata}.new`)).toBe(false)
  })

  it('reads a name split between the prefix and the name fields', async () => {
    const { assets, pgdata } = await place({
      [IMAGE]: tarOf(['/base//1', 'x'], ['/PG_VERSION', '17\n']),
    })
    await makeDataDir(pgdata, undefined, assets)
    expect(await readFile(join(pgdata, 'base', '1'), 'utf8')).toBe('x')
  })

  it('reads a name that begins with two dots but stays inside', async () => {
    const { assets, pgdata } = await place({ [IMAGE]: tarOf(['/..kept', 'x'], ['/PG_VERSION', '17\n']) })
    await makeDataDir(pgdata, undefined, assets)
    expect(await readFile(join(pgdata, '..kept'), 'utf8')).toBe('x')
  })

  it.each([
    ['a name that leaves it through the prefix', tarOf(['/PG_VERSION', '17\n'], ['/..//escaped', 'x'])],
    ['a symbolic link', tarOf(['/PG_VERSION', '17\n'], ['/link', '', '2'])],
    ['a size past its end', cut(514)],
    ['no end-of-archive blocks', cut(700)],
    ['a size that is not a number', patched(124, 'zzzzzzzzzzz\0')],
    ['no PG_VERSION', tarOf(['/base/1', 'x'])],
    ['no ustar header', patched(257, 'other\0')],
  ])('refuses an image with %s, and leaves nothing', async (_, image) => {
    const { assets, pgdata } = await place({ [IMAGE]: image })
    await expect(makeDataDir(pgdata, undefined, assets)).rejects.toThrow()
    expect(existsSync(pgdata)).toBe(false)
    expect(existsSync(`${pgdata}.new`)).toBe(false)
    expect(existsSync(join(pgdata, '..', 'escaped'))).toBe(false)
  })

  it('runs initdb without an image, and PGlite opens what it made', async () => {
    const { pgdata } = await place()
    const told: MadeFrom[] = []
    await makeDataDir(pgdata, (from) => told.push(from), [])
    expect(told).toEqual(['initdb'])
    const pg = new PGlite(pgdata)
    try {
      expect((await pg.query<{ v: number }>('SELECT 40 + 2 AS v')).rows).toEqual([{ v: 42 }])
    } finally {
      await pg.close()
    }
  }, 60_000) // initdb: 5 s of CPU

  it('refuses a directory that holds something else, and leaves it as it was', async () => {
    const { assets, pgdata } = await place({ [IMAGE]: tarOf(['/PG_VERSION', '17\n']) })
    await mkdir(pgdata)
    await writeFile(join(pgdata, 'notes.txt'), 'mine')
    await expect(makeDataDir(pgdata, undefined, assets)).rejects.toThrow(
      /is not empty and holds no PGlite database/,
    )
    expect(await readdir(pgdata)).toEqual(['notes.txt'])
    expect(existsSync(`${pgdata}.new`)).toBe(false)
  })

  it('refuses a pgdata that is a link, and says to link the data directory instead', async () => {
    const { assets, pgdata } = await place({ [IMAGE]: tarOf(['/PG_VERSION', '17\n']) })
    const elsewhere = `${pgdata}-elsewhere`
    await mkdir(elsewhere)
    await symlink(elsewhere, pgdata)
    await expect(makeDataDir(pgdata, undefined, assets)).rejects.toThrow(/is a mount point or a link/)
    expect(await readdir(elsewhere)).toEqual([])
    expect(existsSync(`${pgdata}.new`)).toBe(false)
  })

  it('takes an empty directory as nothing', async () => {
    const { assets, pgdata } = await place({ [IMAGE]: tarOf(['/PG_VERSION', '17\n']) })
    await mkdir(pgdata)
    await makeDataDir(pgdata, undefined, assets)
    expect(isDataDir(pgdata)).toBe(true)
  })
})

describe('the image the build writes', () => {
  it("keeps this PGlite version's image and removes those of others", async () => {
    const { assets } = await place({ 'pglite-initdb-0.0.1.tar.gz': Buffer.from('old') })
    const dir = fileURLToPath(assets[0] as URL)
    await copyFile(join(BUILT, IMAGE), join(dir, IMAGE))
    expect(await writeImage(dir)).toBe(join(dir, IMAGE))
    expect(await readdir(dir)).toEqual([IMAGE])
  })
})
