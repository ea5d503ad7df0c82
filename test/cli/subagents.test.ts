// `preflight subagents apply -f FILE` against a coordinator served on an ephemeral port: the CLI in this
// process (test/support/cli.ts) for files, the real binary for stdin.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { execa } from 'execa'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tokens } from '../support/app.js'
import { testDir } from '../support/checks.js'
import { runCli } from '../support/cli.js'
import { type Served, serveCoordinator } from '../support/served.js'

const BIN = fileURLToPath(new URL('../../bin/preflight.js', import.meta.url))

let s: Served

beforeAll(async () => {
  s = await serveCoordinator()
}, 60_000)

afterAll(() => s?.stop())

const YAML = `# a comment, as YAML allows
name: web-fixer
agent:
  command: [sh, -c, echo fixing]
contextRequires:
  paths:
    - package.json
  exec: [node]
`

function file(name: string, text: string): string {
  const path = join(testDir(), name)
  writeFileSync(path, text)
  return path
}

async function apply(args: string[], env: Record<string, string> = {}) {
  const r = await runCli(['subagents', 'apply', ...args], {
    PREFLIGHT_COORDINATOR: undefined,
    PREFLIGHT_DEBUG: undefined,
    PREFLIGHT_URL: s.server.url,
    PREFLIGHT_TOKEN: tokens.orchestrator,
    ...env,
  })
  return { ...r, stdout: r.stdout.replace(/\n$/, ''), stderr: r.stderr.replace(/\n$/, '') }
}

const latest = async (name: string) =>
  (await s.request('GET', `/v1/subagents/${name}`, { role: 'operator' })).body as {
    version: number
    definition: Record<string, unknown>
  }

describe('preflight subagents apply', () => {
  it('registers a YAML definition: a new version, then unchanged for the same one', async () => {
    const yaml = file('web-fixer.yaml', YAML)
    expect(await apply(['-f', yaml])).toEqual({ exitCode: 0, stdout: 'web-fixer v1 created', stderr: '' })
    expect(await apply(['--file', yaml])).toEqual({
      exitCode: 0,
      stdout: 'web-fixer v1 unchanged',
      stderr: '',
    })
    expect((await latest('web-fixer')).definition).toMatchObject({
      agent: { command: ['sh', '-c', 'echo fixing'] },
      contextRequires: { paths: ['package.json'], exec: ['node'] },
    })
    const changed = file('web-fixer-2.yml', YAML.replace('[node]', '[node, pnpm]'))
    const r = await apply(['-f', changed, '--format', 'json'])
    expect(r.exitCode).toBe(0)
    expect(JSON.parse(r.stdout)).toEqual({
      name: 'web-fixer',
      version: 2,
      hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      created: true,
    })
  })

  it('registers a JSON definition', async () => {
    const json = file('api.json', JSON.stringify({ name: 'api-fixer', agent: { command: ['true'] } }))
    expect(await apply(['-f', json])).toMatchObject({ exitCode: 0, stdout: 'api-fixer v1 created' })
  })

  it('reads the definition from stdin with -f -, YAML or JSON', async () => {
    const run = (input: string) =>
      execa(process.execPath, [BIN, 'subagents', 'apply', '-f', '-'], {
        input,
        reject: false,
        env: { PREFLIGHT_URL: s.server.url, PREFLIGHT_TOKEN: tokens.orchestrator },
        extendEnv: false,
      })
    const yaml = await run(YAML.replace('web-fixer', 'stdin-fixer'))
    expect([yaml.exitCode, yaml.stdout, yaml.stderr]).toEqual([0, 'stdin-fixer v1 created', ''])
    const json = await run(JSON.stringify({ name: 'stdin-fixer', agent: { command: ['true'] } }))
    expect([json.exitCode, json.stdout, json.stderr]).toEqual([0, 'stdin-fixer v2 created', ''])
  })

  it.each([
    [
      'YAML that does not parse',
      'bad.yaml',
      'name: x\nagent: [a\nb: 2\n',
      /^bad\.yaml is not valid YAML: .* at line 3, column 1$/,
    ],
    ['JSON that does not parse', 'bad.json', '{"name": "x",}', /^bad\.json is not valid JSON: /],
    [
      'more than one YAML document',
      'two.yaml',
      `${YAML}---\n${YAML}`,
      /^two\.yaml is not valid YAML: it holds more than one document/,
    ],
    ['an empty file', 'empty.yaml', '', /^empty\.yaml holds no definition$/],
  ])(
    'refuses %s: exit 2, one line naming the file, the coordinator not asked',
    async (_what, name, text, says) => {
      const path = file(name, text)
      const r = await apply(['-f', path], { PREFLIGHT_URL: 'http://127.0.0.1:9' })
      expect(r.exitCode).toBe(2)
      expect(r.stdout).toBe('')
      expect(r.stderr.split('\n')).toHaveLength(1)
      expect(r.stderr.replace(`preflight: ${path.slice(0, -name.length)}`, '')).toMatch(says)
    },
  )

  it('says what the coordinator refused in a definition, in its words: exit 2, one line', async () => {
    const path = file('no-command.yaml', 'name: broken\nagent:\n  command: []\n')
    const r = await apply(['-f', path])
    expect(r.exitCode).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(
      new RegExp(
        `^preflight: the coordinator rejected the definition in ${path} \\(invalid-request: invalid json: agent\\.command: agent\\.command needs at least the program to run\\)$`,
      ),
    )
  })

  it('exits 2 without -f, and 1 for a token that may not register', async () => {
    const r = await apply([])
    expect([r.exitCode, r.stderr]).toEqual([2, 'preflight: give the definition with -f FILE (- reads stdin)'])
    const forbidden = await apply(['-f', file('w.yaml', YAML)], { PREFLIGHT_TOKEN: tokens.operator })
    expect(forbidden.exitCode).toBe(1)
    expect(forbidden.stderr).toMatch(/^preflight: the coordinator answered 403 \(forbidden: /)
  })
})
