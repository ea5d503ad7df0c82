import { readFile, symlink } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { runSetup, setupCommand } from '../../worker/setup.js'
import { removeAll, tempDir, writeFiles } from '../support/git-fixtures.js'

const dirs: string[] = []
afterEach(() => removeAll(dirs))

async function workspace(files: Record<string, string> = {}) {
  const dir = await tempDir()
  dirs.push(dir)
  await writeFiles(dir, files)
  return dir
}

const env = { PATH: process.env.PATH ?? '', MARK: 'from-agent-env' }

// What the setup step would run in `dir` without a workspace.setup argv.
async function scriptOf(dir: string): Promise<string[]> {
  const command = await setupCommand(dir, undefined)
  if (!command) throw new Error(`no setup script in ${dir}`)
  return command
}

describe('runSetup', () => {
  it('runs workspace.setup in the workspace with the agent environment only', async () => {
    const dir = await workspace()
    process.env.PREFLIGHT_TEST_LEAK = 'leaked'
    try {
      // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion, not a template
      const script = 'echo "$MARK|${PREFLIGHT_TEST_LEAK:-none}|$(pwd -P)" > out.txt'
      const result = await runSetup({ workspace: dir, argv: ['sh', '-c', script], env })
      expect(result).toMatchObject({ ok: true })
      const [mark, leak, cwd] = (await readFile(join(dir, 'out.txt'), 'utf8')).trim().split('|')
      expect({ mark, leak }).toEqual({ mark: 'from-agent-env', leak: 'none' })
      expect(cwd?.endsWith(dir.split('/').pop() ?? '')).toBe(true)
    } finally {
      delete process.env.PREFLIGHT_TEST_LEAK
    }
  })

  it('runs preflight-setup.sh with sh when no setup argv is given', async () => {
    const dir = await workspace({ 'preflight-setup.sh': 'mkdir gen && echo ok > gen/out\n' })
    const result = await runSetup({ workspace: dir, argv: await scriptOf(dir), env })
    expect(result).toMatchObject({ ok: true, command: ['sh', 'preflight-setup.sh'] })
    expect(await readFile(join(dir, 'gen/out'), 'utf8')).toBe('ok\n')
  })

  it('runs a preflight-setup.sh that is a link, and fails setup for one it cannot read', async () => {
    const dir = await workspace({ 'scripts/setup.sh': 'echo ok > linked.out\n' })
    await symlink('scripts/setup.sh', join(dir, 'preflight-setup.sh'))
    expect(await runSetup({ workspace: dir, argv: await scriptOf(dir), env })).toMatchObject({ ok: true })
    expect(await readFile(join(dir, 'linked.out'), 'utf8')).toBe('ok\n')
    const dangling = await workspace()
    await symlink('scripts/missing.sh', join(dangling, 'preflight-setup.sh'))
    expect(await runSetup({ workspace: dangling, argv: await scriptOf(dangling), env })).toMatchObject({
      ok: false,
      reason: 'setup-exit',
    })
  })

  it('prefers workspace.setup over preflight-setup.sh', async () => {
    const dir = await workspace({ 'preflight-setup.sh': 'exit 7\n' })
    expect(await setupCommand(dir, ['true'])).toEqual(['true'])
    const result = await runSetup({ workspace: dir, argv: ['true'], env })
    expect(result).toMatchObject({ ok: true, command: ['true'] })
  })

  it('runs nothing when there is neither setup argv nor script', async () => {
    const dir = await workspace()
    expect(await setupCommand(dir, undefined)).toBeUndefined()
    expect(await setupCommand(dir, [])).toBeUndefined()
  })

  it('reports a non-zero exit with the tail of the output', async () => {
    const dir = await workspace()
    const script = 'for i in $(seq 1 100); do echo line-$i; done; echo broken >&2; exit 3'
    const result = await runSetup({ workspace: dir, argv: ['sh', '-c', script], env })
    if (result.ok) throw new Error('setup should have failed')
    expect(result).toMatchObject({ reason: 'setup-exit', exitCode: 3 })
    expect(result.tail).toContain('broken')
    expect(result.tail).toContain('line-100')
    expect(result.tail).not.toContain('line-1\n')
  })

  it('stops a setup that runs past its time bound', async () => {
    const dir = await workspace()
    const result = await runSetup({ workspace: dir, argv: ['sleep', '30'], env, timeoutMs: 200 })
    expect(result).toMatchObject({ ok: false, reason: 'setup-timeout' })
  })

  it('reports a setup program that cannot start', async () => {
    const dir = await workspace()
    const result = await runSetup({ workspace: dir, argv: ['preflight-no-such-program'], env })
    expect(result).toMatchObject({ ok: false, reason: 'setup-not-started', exitCode: 127 })
  })
})
