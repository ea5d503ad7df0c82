import { execFileSync } from 'node:child_process'
import { chmodSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { checkExec } from '../../../worker/checks/exec.js'
import { resolveOnDirs } from '../../../worker/checks/resolve.js'
import { context, link, tempDir, write } from './helpers.js'

const SCRIPT = '#!/bin/sh\nexit 0\n'

// A real PATH directory holding an executable `name`.
function binDir(name: string): string {
  const dir = tempDir('preflight-bin-')
  write(dir, name, SCRIPT, 0o755)
  return dir
}

function onPath(ws: string, ...dirs: string[]) {
  return context(ws, {}, { env: { PATH: dirs.join(':') } })
}

describe('exec', () => {
  it('resolves on the agent PATH in order, naming the binary, its path and real path', async () => {
    const first = binDir('tool')
    const second = binDir('tool')
    expect(await checkExec('tool', onPath(tempDir(), first, second))).toEqual({
      status: 'met',
      observed: { name: 'tool', path: join(first, 'tool'), realpath: join(first, 'tool') },
    })
  })

  it("resolves on the agent's PATH, not the worker's", async () => {
    const ws = tempDir()
    const finding = await checkExec('node', onPath(ws, tempDir()))
    expect(finding).toMatchObject({ status: 'unmet', reason: 'not-found', observed: { name: 'node' } })
  })

  it('rejects a directory that shadows a binary earlier on PATH', async () => {
    const shadow = tempDir()
    mkdirSync(join(shadow, 'pnpm'))
    const ws = tempDir()
    expect(await checkExec('pnpm', onPath(ws, shadow))).toEqual({
      status: 'unmet',
      reason: 'not-found',
      observed: {
        name: 'pnpm',
        searched: [shadow],
        rejected: [{ path: join(shadow, 'pnpm'), why: 'directory' }],
      },
    })
    const real = binDir('pnpm')
    expect(await checkExec('pnpm', onPath(ws, shadow, real))).toMatchObject({
      status: 'met',
      observed: { path: join(real, 'pnpm') },
    })
  })

  it('rejects a file without the execute bit', async () => {
    const dir = tempDir()
    write(dir, 'make', SCRIPT, 0o644)
    const finding = await checkExec('make', onPath(tempDir(), dir))
    expect(finding).toMatchObject({
      status: 'unmet',
      observed: { name: 'make', rejected: [{ path: join(dir, 'make'), why: 'not-executable' }] },
    })
  })

  it('rejects a dangling symlink', async () => {
    const dir = tempDir()
    link(dir, 'yarn', join(dir, 'gone'))
    const finding = await checkExec('yarn', onPath(tempDir(), dir))
    expect(finding.observed.rejected).toEqual([{ path: join(dir, 'yarn'), why: 'dangling-symlink' }])
  })

  it('follows a symlink to an executable and reports its real path', async () => {
    const real = binDir('node-20')
    const dir = tempDir()
    link(dir, 'node', join(real, 'node-20'))
    expect(await checkExec('node', onPath(tempDir(), dir))).toEqual({
      status: 'met',
      observed: { name: 'node', path: join(dir, 'node'), realpath: join(real, 'node-20') },
    })
  })

  it('resolves an empty or relative PATH entry against the workspace', async () => {
    const ws = tempDir()
    write(ws, 'bin/gen', SCRIPT, 0o755)
    write(ws, 'here', SCRIPT, 0o755)
    expect(await checkExec('gen', onPath(ws, 'bin'))).toMatchObject({
      status: 'met',
      observed: { path: join(ws, 'bin/gen') },
    })
    const empty = context(ws, {}, { env: { PATH: `${tempDir()}:` } })
    expect(await checkExec('here', empty)).toMatchObject({
      status: 'met',
      observed: { path: join(ws, 'here') },
    })
  })

  it('is unmet with nothing searched when the agent environment has no PATH', async () => {
    const finding = await checkExec('sh', context(tempDir(), {}, { env: {} }))
    expect(finding).toEqual({
      status: 'unmet',
      reason: 'not-found',
      observed: { name: 'sh', searched: [], rejected: [] },
    })
  })

  it('skips PATH entries that do not exist or are files', async () => {
    const file = write(tempDir(), 'not-a-dir')
    const real = binDir('tool')
    const finding = await checkExec('tool', onPath(tempDir(), '/nonexistent/dir', file, real))
    expect(finding).toMatchObject({ status: 'met', observed: { path: join(real, 'tool') } })
  })

  // A PATH directory this process may not search: stat answers EACCES, which is not "missing" and must
  // not abort the check; the candidate is rejected as not-executable and the search goes on. Root is
  // never refused while it holds CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH, so as root the resolution runs
  // in a child without them (setpriv, the built dist/ module), still as root and so able to read dist/.
  it('rejects a candidate in a directory it may not search, and goes on', () => {
    const root = tempDir()
    const locked = join(root, 'locked')
    write(locked, 'tool', SCRIPT, 0o755)
    const open = join(root, 'open')
    write(open, 'tool', SCRIPT, 0o755)
    chmodSync(locked, 0o000)
    try {
      expect(resolveAsUnprivileged('tool', [locked, open])).toEqual({
        found: join(open, 'tool'),
        rejected: [{ path: join(locked, 'tool'), why: 'not-executable' }],
      })
    } finally {
      chmodSync(locked, 0o755)
    }
  })
})

function resolveAsUnprivileged(name: string, dirs: string[]): unknown {
  if (process.getuid?.() !== 0) return resolveOnDirs(name, dirs)
  const module = new URL('../../../dist/worker/checks/resolve.js', import.meta.url).href
  const script = `const { resolveOnDirs } = await import(${JSON.stringify(module)})
process.stdout.write(JSON.stringify(resolveOnDirs(${JSON.stringify(name)}, ${JSON.stringify(dirs)})))`
  const out = execFileSync(
    'setpriv',
    ['--bounding-set=-dac_override,-dac_read_search', process.execPath, '--input-type=module', '-e', script],
    { encoding: 'utf8' },
  )
  return JSON.parse(out)
}
