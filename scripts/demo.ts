// `npm run demo`: two dispatches against a sample repository — one met, one missing a binary — and the
// failed dispatch's report as an operator sees it. Uses the coordinator `npm start` runs, else its own.
import { execFileSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { formatReport } from '../src/cli/reports-format.js'
import { type Client, createClient, DEFAULT_RETRY } from '../src/client/index.js'
import { isFinal } from '../src/contract/final.js'
import type { DispatchView, SubagentDefinition } from '../src/contract/index.js'
import {
  answers,
  bootstrapTokens,
  ensureBuilt,
  freePort,
  isolationArgs,
  readState,
  spawnPreflight,
  tokenSpec,
  waitExit,
  waitReady,
} from './local.js'

const cleanup: (() => Promise<unknown>)[] = []
try {
  const { url, tokens, own } = await coordinator()
  const repo = await sampleRepo()
  const missing = 'pnpm-not-installed'
  // a coordinator that went away is said within seconds, not after the worker's ten minutes of tries
  const retry = { ...DEFAULT_RETRY, budgetMs: 10_000 }
  const orchestrator = createClient({ url, token: tokens.orchestrator, retry })
  const operator = createClient({ url, token: tokens.operator, retry })
  await orchestrator.registerSubagent(subagent('demo-ready', ['git', 'sh']))
  await orchestrator.registerSubagent(subagent('demo-needs-pnpm', ['git', missing]))
  const ids: string[] = []
  for (const name of ['demo-ready', 'demo-needs-pnpm']) {
    const body = { subagent: name, workspace: { repo }, idempotencyKey: `demo-${randomUUID()}` }
    ids.push((await orchestrator.createDispatch(body)).id)
  }
  console.log(`dispatched ${ids.length} jobs against ${repo}; waiting for the worker…\n`)
  const finals = await Promise.all(ids.map((id) => waitDone(orchestrator, id)))
  for (const d of finals)
    console.log(`  ${d.subagent.name.padEnd(16)} ${d.status.padEnd(17)} dispatch ${d.id}`)
  const failed = finals.find((d) => d.status === 'preflight_failed')
  if (!failed) throw new Error('expected one dispatch to fail its preflight')
  const reports = await operator.listReports({ subagent: 'demo-needs-pnpm', outcome: 'unmet', limit: 1 })
  const report = reports.items.find((r) => r.dispatchId === failed.id) ?? reports.items[0]
  if (report)
    console.log(
      `\nthe failed report, as \`preflight reports --outcome unmet\` prints it:\n\n${formatReport(report).trimEnd()}`,
    )
  console.log(
    `\nThe same, as JSON: curl -s '${url}/v1/reports?subagent=demo-needs-pnpm&outcome=unmet' -H 'Authorization: Bearer ${tokens.operator}'`,
  )
  console.log(
    `In a browser: ${url}/ui/dispatches/${failed.id} (sign in with the operator token ${tokens.operator})`,
  )
  if (own) await untilEnter(url)
} catch (err) {
  console.error(`npm run demo: ${(err as Error).message}`)
  process.exitCode = 1
} finally {
  for (const release of cleanup.reverse()) await release()
}

function subagent(name: string, exec: string[]): SubagentDefinition {
  return {
    name,
    description: 'preflight demo',
    agent: { command: ['sh', '-c', 'echo "agent running in $(pwd)"; ls'] },
    contextRequires: { paths: ['package.json', 'src/**/*.ts'], exec, git: { worktree: true, history: true } },
  }
}

// The coordinator of `npm start` (./.preflight/start.json or PREFLIGHT_URL + tokens), else a private one.
async function coordinator() {
  const state = await readState()
  const url = process.env.PREFLIGHT_URL ?? state?.url
  const { PREFLIGHT_ORCHESTRATOR_TOKEN: orchestrator, PREFLIGHT_OPERATOR_TOKEN: operator } = process.env
  if (url && (await answers(`${url}/healthz`))) {
    const tokens =
      orchestrator && operator
        ? bootstrapTokens(`orchestrator:${orchestrator},operator:${operator}`)
        : state?.tokens
    if (!tokens)
      throw new Error(
        `a coordinator answers at ${url}, but no tokens: set PREFLIGHT_ORCHESTRATOR_TOKEN and PREFLIGHT_OPERATOR_TOKEN`,
      )
    console.log(`using the coordinator at ${url}\n`)
    return { url, tokens, own: false }
  }
  return startPrivate()
}

async function startPrivate() {
  await ensureBuilt()
  const home = await mkdtemp(join(tmpdir(), 'preflight-demo-'))
  cleanup.push(() => rm(home, { recursive: true, force: true }))
  const tokens = bootstrapTokens('')
  const port = String(await freePort())
  const url = `http://127.0.0.1:${port}`
  console.log(`no coordinator answers; starting a private one at ${url} (PGlite in ${home})\n`)
  const env = { PREFLIGHT_BOOTSTRAP_TOKENS: tokenSpec(tokens) }
  const coord = spawnPreflight(['coordinator', '--port', port], { cwd: home, env, quiet: true })
  cleanup.push(() => stopChild(coord))
  await waitReady(url, coord)
  // --allow-local-repos: the demo's sample repository is a directory on this machine.
  const args = ['worker', '--coordinator', url, '--workdir', join(home, 'work'), '--allow-local-repos']
  // agents of their own uid must pass through home to reach their workspace
  if (isolationArgs().length > 0) await chmod(home, 0o711)
  args.push(...isolationArgs())
  const worker = spawnPreflight(args, {
    cwd: home,
    env: { PREFLIGHT_TOKEN: tokens.worker },
    quiet: true,
  })
  cleanup.push(() => stopChild(worker))
  return { url, tokens, own: true }
}

// The demo's own coordinator answers those links until Enter (or Ctrl-C) on a terminal; elsewhere it
// stops at once, and says so.
async function untilEnter(url: string) {
  if (!process.stdin.isTTY) {
    console.log(
      `\n(${url} was the demo's own coordinator, stopped now: the links work while \`npm start\` runs and \`npm run demo\` uses it)`,
    )
    return
  }
  console.log(`\nThe demo's own coordinator answers at ${url} until you press Enter.`)
  await new Promise<void>((resolve) => {
    process.stdin.once('data', () => resolve())
    process.stdin.resume()
  })
  process.stdin.pause()
}

async function stopChild(child: ReturnType<typeof spawnPreflight>) {
  if (child.exitCode === null) child.kill('SIGTERM')
  await waitExit(child)
}

async function sampleRepo(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'preflight-demo-repo-'))
  cleanup.push(() => rm(dir, { recursive: true, force: true }))
  await mkdir(join(dir, 'src'))
  await writeFile(join(dir, 'package.json'), '{ "name": "demo-app", "private": true }\n')
  await writeFile(join(dir, 'src', 'index.ts'), 'export const hello = "world"\n')
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=demo', '-c', 'user.email=demo@example.invalid', ...args], {
      cwd: dir,
      stdio: 'ignore',
    })
  git('init', '-q')
  git('add', '-A')
  git('commit', '-q', '-m', 'sample')
  return dir
}

async function waitDone(client: Client, id: string): Promise<DispatchView> {
  const d = await client.waitForDispatch(id, { timeoutMs: 120_000 })
  if (!isFinal(d.status)) throw new Error(`dispatch ${id} did not finish within 120 s — is a worker running?`)
  return d
}
