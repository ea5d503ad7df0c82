// End to end, as the attacker: a worker running as root with --agent-uid, and agents that hunt for its
// token, leave processes behind, plant files for later dispatches and reach for other workspaces.
import { spawnSync } from 'node:child_process'
import { chownSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import {
  agentOutbox,
  dispatch,
  e2eSuite,
  ending,
  type Proc,
  register,
  serveCoordinator,
  spawnWorker,
  TOKENS,
  waitForStatus,
} from '../support/e2e.js'
import { diesWithin } from '../support/git-fixtures.js'
import { waitFor } from '../support/wait.js'

const BASE = 61_000
const isRoot = process.getuid?.() === 0

const suite = e2eSuite({ 'package.json': '{}\n' })
let coordinator: { url: string }
let worker: Proc
let workdir: string
// the agents' one way to tell the test what they saw: a directory every uid may write
let outbox: string

beforeAll(async () => {
  if (!isRoot) return
  outbox = await agentOutbox(suite)
  workdir = join(suite.scratch, 'work')
  plantStale()
  coordinator = await serveCoordinator(suite)
  worker = spawnWorker(coordinator.url, {
    workdir,
    args: ['--agent-uid', String(BASE), '--concurrency', '2'],
  })
})

const wait = (id: string) => waitForStatus(coordinator.url, id, 60_000, [worker])

// What a worker that died with a dispatch on slot 1 left: a HOME in its workdir, an entry at the top of
// /tmp and a System V message queue of the slot uid. The next worker removes them before it claims.
const STALE = {
  home: () => join(workdir, '00000000-0000-4000-8000-000000000000-1.home'),
  tmp: `/tmp/preflight-e2e-stale-${process.pid}`,
}
function plantStale(): void {
  mkdirSync(STALE.home(), { recursive: true })
  chownSync(STALE.home(), BASE, BASE)
  writeFileSync(STALE.tmp, 'left\n')
  chownSync(STALE.tmp, BASE, BASE)
  expect(spawnSync('ipcmk', ['-Q'], { uid: BASE, gid: BASE }).status).toBe(0)
}

async function run(name: string, script: string | string[], setup?: string[]) {
  const command = typeof script === 'string' ? ['sh', '-c', script] : script
  await register(coordinator.url, { name, agent: { command } })
  return dispatch(coordinator.url, name, { repo: suite.repo, ...(setup ? { setup } : {}) })
}

const read = (file: string) => readFile(join(outbox, file), 'utf8').catch(() => '')
// A shell loop that waits (up to 10 s) until a process it started in the background wrote its pid: a
// fixed sleep lost that race on a loaded machine, and the script ended before there was a pid to read.
const until = (file: string) => `for _ in $(seq 200); do [ -s ${file} ] && break; sleep 0.05; done`

// Only root can switch uids; CI runs as root, and so does every machine of this project.
describe.runIf(isRoot)('an agent under --agent-uid', () => {
  it('finds the worker token nowhere it can read: environment, /proc, HOME, the workdir', async () => {
    const hunt = [
      'out=$0/hunt; env > $out',
      'for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do cat $f 2>/dev/null | tr "\\0" "\\n"; done >> $out',
      'grep -rs "" "$HOME" "$TMPDIR" >> $out',
      `ls -la ${workdir} >> $out 2>&1 || echo "workdir: not listable" >> $out`,
      'echo uid=$(id -u) groups=$(id -G) >> $out',
    ].join('\n')
    const id = await run('iso-hunt', ['sh', '-c', hunt, outbox])
    expect(ending(await wait(id))).toMatchObject({ status: 'succeeded' })
    const seen = await read('hunt')
    expect(seen).toContain('workdir: not listable')
    expect(seen).toMatch(new RegExp(`uid=(${BASE}|${BASE + 1}) groups=\\1\n`))
    expect(seen).not.toContain(TOKENS.worker)
    // nor is it there for whoever may read the worker's /proc entry: the worker scrubbed it at start
    expect(await readFile(`/proc/${worker.child.pid}/environ`, 'utf8')).not.toContain(TOKENS.worker)
  }, 90_000)

  it("removes what a dead worker left of the slot uids before the first claim: the workdir's, /tmp's, IPC", async () => {
    const queues = () =>
      readFileSync('/proc/sysvipc/msg', 'utf8')
        .split('\n')
        .filter((row) => row.includes(` ${BASE} `))
    await waitFor(async () => !existsSync(STALE.home()) && !existsSync(STALE.tmp) && queues().length === 0, {
      timeoutMs: 20_000,
      everyMs: 100,
      what: worker.output,
    })
  }, 30_000)

  it('runs setup as the slot uid too', async () => {
    const id = await run('iso-setup', `id -u > ${outbox}/agent-uid`, [
      'sh',
      '-c',
      `id -u > ${outbox}/setup-uid`,
    ])
    expect(ending(await wait(id))).toMatchObject({ status: 'succeeded' })
    const uid = (await read('agent-uid')).trim()
    expect([String(BASE), String(BASE + 1)]).toContain(uid)
    expect((await read('setup-uid')).trim()).toBe(uid)
  }, 90_000)

  it('leaves no process behind: one started with setsid is gone when its dispatch ends', async () => {
    const script = `setsid sh -c 'echo $$ > ${outbox}/escaped; sleep 30; touch ${outbox}/late' & ${until(`${outbox}/escaped`)}`
    const id = await run('iso-setsid', script)
    expect(ending(await wait(id))).toMatchObject({ status: 'succeeded' })
    const pid = Number(await read('escaped'))
    expect(pid).toBeGreaterThan(0)
    expect(await diesWithin(pid, 2_000)).toBe(true)
  }, 90_000)

  it('stops what setup left running before the workspace is checked', async () => {
    const pidFile = join(outbox, 'setup-escaped')
    const id = await run(
      'iso-setup-escape',
      // running, not a zombie (a killed orphan may wait for a PID 1 that does not reap)
      `grep -qs '^State:.[RSD]' /proc/$(cat ${pidFile})/status && echo alive > ${outbox}/seen || echo gone > ${outbox}/seen`,
      ['sh', '-c', `setsid sh -c 'echo $$ > ${pidFile}; sleep 30' & ${until(pidFile)}`],
    )
    expect(ending(await wait(id))).toMatchObject({ status: 'succeeded' })
    expect(Number(await read('setup-escaped'))).toBeGreaterThan(0)
    expect((await read('seen')).trim()).toBe('gone')
  }, 90_000)

  it('gives every dispatch a fresh HOME: what one agent writes there is not there for the next', async () => {
    const first = await run('iso-home-1', `echo planted > "$HOME/planted"; echo "$HOME" > ${outbox}/home-1`)
    expect(ending(await wait(first))).toMatchObject({ status: 'succeeded' })
    const second = await run(
      'iso-home-2',
      `ls "$HOME"/planted > ${outbox}/home-2 2>&1 || echo absent >> ${outbox}/home-2; echo "$HOME" >> ${outbox}/home-2`,
    )
    expect(ending(await wait(second))).toMatchObject({ status: 'succeeded' })
    const [seen, home] = (await read('home-2')).trim().split('\n').slice(-2)
    expect(seen).toBe('absent')
    expect(home).not.toBe((await read('home-1')).trim())
  }, 90_000)

  it('leaves nothing of an agent at the top of /tmp for the next', async () => {
    const name = `preflight-e2e-left-${process.pid}`
    const id = await run('iso-tmp', `echo left > /tmp/${name}; mkdir /dev/shm/${name}`)
    expect(ending(await wait(id))).toMatchObject({ status: 'succeeded' })
    await waitFor(async () => !existsSync(`/tmp/${name}`) && !existsSync(`/dev/shm/${name}`), {
      timeoutMs: 10_000,
      everyMs: 100,
      what: worker.output,
    })
  }, 90_000)

  it("cannot write to the workdir's top nor into another slot's workspace", async () => {
    const holder = await run('iso-holder', `pwd > ${outbox}/holder-pwd; sleep 4`)
    await waitFor(async () => (await read('holder-pwd')) !== '', {
      timeoutMs: 30_000,
      everyMs: 100,
      what: worker.output,
    })
    const other = (await read('holder-pwd')).trim()
    const probe = [
      `touch ${workdir}/planted 2>/dev/null && echo top-written || echo top-refused`,
      `touch ${other}/planted 2>/dev/null && echo other-written || echo other-refused`,
      `ls ${other} > /dev/null 2>&1 && echo other-listed || echo other-unlisted`,
    ].join('; ')
    const prober = await run('iso-prober', `(${probe}) > ${outbox}/reach`)
    expect(ending(await wait(prober))).toMatchObject({ status: 'succeeded' })
    const held = ending(await wait(holder))
    expect(held, JSON.stringify(held)).toMatchObject({ status: 'succeeded' })
    expect((await read('reach')).trim().split('\n')).toEqual([
      'top-refused',
      'other-refused',
      'other-unlisted',
    ])
    // removed once each dispatch closes, which follows its completion
    await waitFor(async () => (await readdir(workdir)).length === 0, {
      timeoutMs: 10_000,
      everyMs: 100,
      what: worker.output,
    })
  }, 90_000)

  it('judges exec for the slot uid: a root-only tool on its PATH is unmet', async () => {
    const tools = join(suite.scratch, 'tools')
    await mkdir(tools, { mode: 0o755 })
    await writeFile(join(tools, 'rootonly'), '#!/bin/sh\nexit 0\n', { mode: 0o700 })
    await writeFile(join(tools, 'anyone'), '#!/bin/sh\nexit 0\n', { mode: 0o755 })
    await register(coordinator.url, {
      name: 'iso-exec',
      agent: { command: ['true'], env: { PATH: `${tools}:/usr/bin:/bin` } },
      contextRequires: { exec: ['anyone', 'rootonly'] },
    })
    const done = await wait(await dispatch(coordinator.url, 'iso-exec', { repo: suite.repo }))
    expect(done.status).toBe('preflight_failed')
    expect(done.preflight?.results.map((r) => [r.requirement, r.status])).toEqual([
      ['anyone', 'met'],
      ['rootonly', 'unmet'],
    ])
    expect(done.preflight?.results[1]).toMatchObject({
      observed: { rejected: [{ path: join(tools, 'rootonly'), why: 'not-executable' }] },
    })
  }, 90_000)

  // The first finding's first step: slot 1's setup opens its TMPDIR to every uid and says where it is;
  // slot 2's agent puts a directory of links to a root-only file in place of each baseline scratch
  // directory it finds there. Root must write nothing through them: there must be nothing to find.
  it("gives another slot's agent no baseline scratch to swap: root writes nothing through its links", async () => {
    const vault = join(suite.scratch, 'vault')
    await mkdir(vault, { mode: 0o700 })
    const target = join(vault, 'target')
    await writeFile(target, 'root only\n')
    const file = (name: string) => join(outbox, name)
    const [published, stop, ready, swaps] = [file('victim-tmp'), file('stop'), file('ready'), file('swaps')]
    const swapper = await run('iso-swapper', ['perl', '-e', SWAPPER, published, stop, ready, swaps, target])
    await waitFor(async () => existsSync(ready), { timeoutMs: 30_000, everyMs: 100, what: worker.output })
    // 51 untracked links in the victim's workspace: the baseline records each one
    const victim = await run('iso-victim', 'true', [
      'sh',
      '-c',
      `chmod 0777 "$TMPDIR" && echo "$TMPDIR" > ${published} && perl -e 'symlink("package.json", "l$_") for 0..50'`,
    ])
    const done = await wait(victim)
    await writeFile(stop, '')
    expect(ending(done)).toMatchObject({ status: 'succeeded' })
    expect(done.completion?.baseline?.tree).toMatch(/^[0-9a-f]{40}$/)
    expect(ending(await wait(swapper))).toMatchObject({ status: 'succeeded' })
    expect(await readFile(target, 'utf8')).toBe('root only\n')
    expect(await read('swaps')).toBe('')
  }, 90_000)

  it('removes a tree deeper than PATH_MAX that setup left in the workspace and in TMPDIR', async () => {
    const deep = `perl -e 'for my $top (@ARGV) { chdir $top or die; for (1..2500) { mkdir "d" or die; chdir "d" or die } }' "$PWD" "$TMPDIR"`
    const report = `echo "$PWD" > ${outbox}/deep-ws; echo "$TMPDIR" > ${outbox}/deep-tmp`
    const id = await run('iso-deep', report, ['sh', '-c', deep])
    expect(ending(await wait(id))).toMatchObject({ status: 'succeeded' })
    const left = [(await read('deep-ws')).trim(), (await read('deep-tmp')).trim()]
    expect(left.every((dir) => dir.startsWith(workdir))).toBe(true)
    await waitFor(async () => !left.some(existsSync), {
      timeoutMs: 20_000,
      everyMs: 100,
      what: worker.output,
    })
  }, 90_000)

  it('leaves no System V IPC object and nothing in /run/lock of an agent for the next', async () => {
    const lock = `/run/lock/preflight-e2e-${process.pid}`
    const id = await run('iso-ipc', `ipcmk -M 65536 && ipcmk -Q && ipcmk -S 1 && touch ${lock}`)
    expect(ending(await wait(id))).toMatchObject({ status: 'succeeded' })
    const slots = [BASE, BASE + 1]
    const ipcLeft = () =>
      ['shm', 'msg', 'sem'].flatMap((table) => {
        const [header = '', ...rows] = readFileSync(`/proc/sysvipc/${table}`, 'utf8').trim().split('\n')
        const uid = header.trim().split(/\s+/).indexOf('uid')
        return rows.filter((row) => slots.includes(Number(row.trim().split(/\s+/)[uid])))
      })
    await waitFor(async () => ipcLeft().length === 0 && !existsSync(lock), {
      timeoutMs: 10_000,
      everyMs: 100,
      what: worker.output,
    })
  }, 90_000)

  // git runs as the agent for the checks and the baseline: a `.git` that setup pointed at a repository
  // the agent cannot read is no repository to it, and nothing is written there.
  it("judges git as the agent: a gitfile setup points at the worker's repository does not count", async () => {
    const objects = await readdir(join(suite.repo, '.git', 'objects'))
    await register(coordinator.url, {
      name: 'iso-gitfile',
      agent: { command: ['true'] },
      contextRequires: { git: { worktree: true, history: true } },
    })
    const id = await dispatch(coordinator.url, 'iso-gitfile', {
      repo: suite.repo,
      setup: ['sh', '-c', `rm -rf .git && echo "gitdir: ${suite.repo}/.git" > .git`],
    })
    const done = await wait(id)
    expect(done.status).toBe('preflight_failed')
    expect(done.preflight?.results.map((r) => r.status)).toEqual(['unmet', 'unmet'])
    expect(await readdir(join(suite.repo, '.git', 'objects'))).toEqual(objects)
  }, 90_000)
})

// Slot 2's agent as the attacker: waits for slot 1's TMPDIR, then until told to stop (≤ 30 s) replaces
// every baseline scratch directory it finds there with a 0777 directory of links to `target`, named as
// the worker's own files there were (link-N, name-N).
const SWAPPER = `my ($published, $stop, $ready, $swaps, $target) = @ARGV; my $until = time + 30;
open(my $r, '>', $ready) or die; close $r;
my $tmp;
while (time < $until && !$tmp) { if (open(my $f, '<', $published)) { $tmp = <$f>; chomp $tmp if $tmp } select(undef, undef, undef, 0.01) }
while (time < $until && !-e $stop) {
  for my $d (glob("$tmp/preflight-baseline-*")) {
    next if -l $d || -e "$d/.ours" || $d =~ /\\.taken$/;
    rename($d, "$d.taken") or next;
    mkdir($d) or next; chmod(0777, $d);
    open(my $m, '>', "$d/.ours"); close $m;
    symlink($target, "$d/$_") for map { ("link-$_", "name-$_") } 0..60;
    open(my $s, '>>', $swaps); print $s "$d\\n"; close $s;
  }
  select(undef, undef, undef, 0.001);
}`
