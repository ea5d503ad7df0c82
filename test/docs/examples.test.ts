// The shell examples of README.md and docs/*.md, run as a reader would: against a live coordinator
// and a real worker, with the built `preflight` on PATH, in a fresh git repository. Every ```sh block
// is either run here or named below with where else it is held, so a new example cannot go untested
// unnoticed. The only edits: the placeholders a reader replaces (the tokens npm start prints, its URL).
import { execFileSync, spawn } from 'node:child_process'
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tokens } from '../support/app.js'
import { runCli } from '../support/cli.js'
import { type Served, serveCoordinator } from '../support/served.js'
import { waitFor } from '../support/wait.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const BIN = join(ROOT, 'bin', 'preflight.js')

// Blocks not run here, by file and first line, with where they are held instead.
const HELD_ELSEWHERE: Record<string, string> = {
  'README.md: npm ci && npm start': 'npm start: test/scripts/start.test.ts; npm test is what CI runs',
  'docs/operations.md: cp .env.example .env':
    'compose: test/containers/compose.test.ts (npm run test:containers)',
  'docs/operations.md: docker pull node:24-bookworm-slim':
    'needs a registry; the NODE_IMAGE build argument is test/containers/images.test.ts',
  'docs/operations.md: # as root on Debian or Ubuntu, with no engine running: one is started for the run (socket':
    'the container tests themselves, run by .ci/run',
  'docs/mutation.md: npm run test:mutation': 'run by .ci/run',
  'docs/benchmarks.md: npm run bench:coordinator -- --baseline REF [--gate RATIO]':
    'a synopsis: .ci/run runs it against .ci/bench-baseline with --gate',
  'docs/attribution.md: preflight learn [--workspace DIR] [--against DEFINITION.json] [--format text|json] -- COMMAND [ARG…]':
    'a synopsis: test/cli/learn.test.ts runs each form (a command, --against, --from)',
  'docs/worker.md: preflight worker --coordinator URL':
    'a synopsis: its flags are checked against the worker below',
  "docs/worker.md: preflight worker … --repo-allow 'https://github.com/acme/*' --repo-allow 'git@github.com:acme/*'":
    'a fragment: the patterns are test/worker/repo-allow.test.ts',
}

interface Block {
  key: string
  // the file and the heading it is under: a RUN entry may run a section's blocks as one script
  section: string
  text: string
}

async function shellBlocks(): Promise<Block[]> {
  const files = ['README.md', ...(await readdir(join(ROOT, 'docs'))).map((f) => `docs/${f}`)]
  const blocks: Block[] = []
  for (const file of files.filter((f) => f.endsWith('.md'))) {
    const text = await readFile(join(ROOT, file), 'utf8')
    for (const match of text.matchAll(/^```(?:sh|bash|shell|console)\n([\s\S]*?)^```$/gm)) {
      const body = match[1] as string
      const first = body
        .split('\n')[0]
        ?.replace(/\s+#.*$/, '')
        .trim()
      const heading = [...text.slice(0, match.index).matchAll(/^## (.*)$/gm)].at(-1)?.[1] ?? ''
      blocks.push({ key: `${file}: ${first}`, section: `${file}#${heading}`, text: body })
    }
  }
  return blocks
}

let s: Served
let home: string
let worker: ReturnType<typeof spawn>
let env: NodeJS.ProcessEnv

beforeAll(async () => {
  s = await serveCoordinator()
  home = await mkdtemp(join(tmpdir(), 'preflight-docs-'))
  // `preflight` on PATH, as `npm link` or the image puts it
  await mkdir(join(home, 'bin'))
  await symlink(BIN, join(home, 'bin', 'preflight'))
  // the reader's project: a git repository with a package.json and TypeScript sources
  const repo = join(home, 'repo')
  await mkdir(join(repo, 'src'), { recursive: true })
  await writeFile(join(repo, 'package.json'), '{ "name": "app", "private": true }\n')
  await writeFile(join(repo, 'src', 'index.ts'), 'export const x = 1\n')
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args], { cwd: repo })
  git('init', '-q', '-b', 'main')
  git('add', '-A')
  git('commit', '-q', '-m', 'app')
  env = { ...process.env, PATH: `${join(home, 'bin')}:${process.env.PATH}` }
  for (const name of Object.keys(env)) if (name.startsWith('PREFLIGHT_')) delete env[name]
  // what the README's walkthrough exported, which the orchestrator's guide goes on from
  env.ORCHESTRATOR_TOKEN = tokens.orchestrator
  env.OPERATOR_TOKEN = tokens.operator
  env.PREFLIGHT_URL = s.server.url
  env.PREFLIGHT_ORCHESTRATOR_TOKEN = tokens.orchestrator
  env.PREFLIGHT_OPERATOR_TOKEN = tokens.operator
  worker = spawn(
    process.execPath,
    [BIN, 'worker', '--coordinator', s.server.url, '--allow-local-repos', '--workdir', join(home, 'work')],
    { env: { ...env, PREFLIGHT_TOKEN: tokens.worker }, stdio: 'ignore' },
  )
}, 60_000)

afterAll(async () => {
  worker?.kill('SIGKILL')
  await s?.stop()
  await rm(home, { recursive: true, force: true })
})

// An example as a reader runs it: one bash, in the repository, the placeholders filled in. Exit codes
// 0 and 1 are answers (1: unmet); a command that exits 2 or more is a broken example. Steps numbered
// "# 2." follow the earlier ones' effects ("a few seconds later"): before each, the shell waits on a
// FIFO until the worker has ended every dispatch.
async function runExample(text: string, cwd: string): Promise<{ output: string; broken: string[] }> {
  const filled = text
    .replaceAll('http://127.0.0.1:8080', s.server.url.replace(/\/$/, ''))
    .replaceAll('pf_orchestrator_…', tokens.orchestrator)
    .replaceAll('pf_operator_…', tokens.operator)
    .replaceAll('https://git.example.com/org/app.git', join(home, 'repo'))
  const fifo = join(home, `step-${Date.now()}`)
  execFileSync('mkfifo', [fifo])
  const steps = filled.split(/^(?=# \d+\. )/m)
  const script = [
    `trap 'c=$?; [ $c -ge 2 ] && echo "BROKEN($c): $BASH_COMMAND" >&2' ERR`,
    steps.join(`echo __STEP__; read -r _ < '${fifo}'\n`),
  ].join('\n')
  const child = spawn('bash', ['-o', 'pipefail', '-c', script], { cwd, env })
  let output = ''
  child.stderr.on('data', (b) => (output += b))
  child.stdout.on('data', async (b) => {
    output += b
    if (!String(b).includes('__STEP__')) return
    await settled()
    await writeFile(fifo, 'go\n')
  })
  await new Promise((done) => child.on('close', done))
  return { output: output.replaceAll('__STEP__\n', ''), broken: output.match(/^BROKEN.*$/gm) ?? [] }
}

async function settled(): Promise<void> {
  await waitFor(
    async () => {
      const busy = sql`SELECT 1 FROM dispatches WHERE status IN ('queued', 'claimed', 'running') LIMIT 1`
      return ((await s.t.db.orm.execute(busy)) as unknown as unknown[]).length === 0
    },
    { timeoutMs: 60_000, everyMs: 100, what: 'every dispatch to end' },
  )
}

describe('shell examples in README and docs', () => {
  it('every block is run here or held elsewhere', async () => {
    const blocks = await shellBlocks()
    const unknown = blocks
      .filter((b) => !(b.key in HELD_ELSEWHERE) && !(b.key in RUN) && !(b.section in RUN))
      .map((b) => b.key)
    expect(unknown).toEqual([])
    const stale = [...Object.keys(HELD_ELSEWHERE), ...Object.keys(RUN)].filter(
      (k) => !blocks.some((b) => b.key === k || b.section === k),
    )
    expect(stale).toEqual([])
  })

  it('README lists every document of docs/', async () => {
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8')
    const docs = (await readdir(join(ROOT, 'docs'))).filter((f) => f.endsWith('.md'))
    expect(docs.filter((f) => !readme.includes(`](docs/${f})`))).toEqual([])
  })

  it("the worker's synopsis in docs/worker.md has exactly the flags of preflight worker --help", async () => {
    const block = (await shellBlocks()).find((b) =>
      b.key.startsWith('docs/worker.md: preflight worker --coordinator'),
    )
    const help = await runCli(['worker', '--help'])
    const flags = (text: string) => new Set(text.match(/--[a-z][a-z-]+/g))
    const documented = flags(block?.text ?? '')
    // --token is refused (a command line is public); the synopsis says so instead of listing it
    const offered = [...flags(help.stdout)].filter((f) => f !== '--help' && f !== '--token')
    expect(offered.filter((f) => !documented.has(f))).toEqual([])
    expect([...documented].filter((f) => !offered.includes(f) && f !== '--token')).toEqual([])
  })

  // Each block with what its output must show; by default it runs in the reader's repository.
  const RUN: Record<string, { inProject?: boolean; shows: (output: string) => void }> = {
    // "with npm start running, in a second terminal" of the project: this coordinator stands in for
    // npm start's, named the way the demo takes one that is not npm start's own
    'README.md: npm run demo': {
      inProject: true,
      shows: (out) => {
        expect(out).toContain(`using the coordinator at ${s.server.url}`)
        expect(out).toMatch(/demo-needs-pnpm\s+preflight_failed/)
        expect(out).toContain('exec pnpm-not-installed')
      },
    },
    'README.md: export PREFLIGHT_URL=http://127.0.0.1:8080': {
      shows: (out) => {
        expect(out).not.toMatch(/"error":/)
        expect(out).toMatch(/"hash":/)
        expect(out).toMatch(/preflight_failed/)
        expect(out).toMatch(/unmet +exec pnpm — not-found/)
        expect(out).toMatch(/not-found/)
      },
    },
    // after the README's walkthrough registered frontend-fixer (which needs pnpm): on the reader's
    // repository its preflight fails, and every step has something to show
    "docs/http-api.md#Orchestrator's guide": {
      shows: (out) => {
        expect(out).toMatch(/"status": "preflight_failed"/)
        expect(out).toMatch(/"name": "pnpm"|pnpm/)
        expect(out).toMatch(/event: end/)
        expect(out).toMatch(/invalid-state/)
        expect(out).toMatch(/preflight_failed\s+frontend-fixer/)
      },
    },
    'README.md: echo \'{ "paths": ["package.json"], "exec": ["node", "pnpm"], "git": { "history": true } }\' > requires.json':
      {
        shows: (out) => {
          expect(out).toMatch(/pnpm/)
          expect(out).toMatch(/"status": ?"unmet"/)
        },
      },
  }

  for (const [key, { inProject, shows }] of Object.entries(RUN)) {
    it(`runs ${key}`, async () => {
      // one block, or every block of a section in order, as one script
      const blocks = (await shellBlocks()).filter((b) => b.key === key || b.section === key)
      expect(blocks.length).toBeGreaterThan(0)
      const script = blocks.map((b) => b.text).join('\n')
      const ran = await runExample(script, inProject ? ROOT : join(home, 'repo'))
      expect(ran.broken, ran.output).toEqual([])
      const output = ran.output
      shows(output)
    }, 120_000)
  }
})
