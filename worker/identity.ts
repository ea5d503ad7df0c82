// The agent's own identity (--agent-uid): a uid/gid per slot, the privileges switching to it takes, and
// the sweep that leaves no process of that uid behind.
import { spawn } from 'node:child_process'
import { lchownSync, lstatSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs'
import { chmod, lchown, mkdir } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import { setImmediate } from 'node:timers/promises'
import { Access, mayAccess, reachable } from './checks/access.js'
import type { AgentIdentity } from './run/process.js'
import { removeAgentTrees } from './run/remove.js'

export type { AgentIdentity }

// Slot i (from 0) runs setup and the agent as uid = gid = base + i, with no supplementary groups.
export function slotIdentity(base: number, slot: number): AgentIdentity {
  return { uid: base + slot, gid: base + slot }
}

// Every slot's identity of a worker (--agent-uid, --concurrency).
export function slotIdentities(base: number, concurrency: number): AgentIdentity[] {
  return Array.from({ length: concurrency }, (_, slot) => slotIdentity(base, slot))
}

// What the worker does to and for another uid, by capability (bit number in CapEff).
const NEEDED = {
  CAP_CHOWN: 0, // hand the clone, HOME and TMPDIR to the slot uid
  CAP_DAC_OVERRIDE: 1, // check, baseline and remove what the agent made, whatever its modes
  CAP_FOWNER: 3, // chmod what the agent owns
  CAP_KILL: 5, // stop setup's and the agent's process groups
  CAP_SETGID: 6, // start them as the slot gid, with no supplementary groups
  CAP_SETUID: 7, // … and the slot uid
} as const

// The capabilities --agent-uid needs that this process lacks (none for root with the usual set).
export function missingCapabilities(status = readStatus('self')): string[] {
  const hex = /^CapEff:\s*([0-9a-f]+)$/m.exec(status ?? '')?.[1]
  if (hex === undefined) return Object.keys(NEEDED)
  const effective = BigInt(`0x${hex}`)
  return Object.entries(NEEDED)
    .filter(([, bit]) => (effective & (1n << BigInt(bit))) === 0n)
    .map(([name]) => name)
}

const SWEEP_DEADLINE_MS = 10_000
const SWEEP_PAUSE_MS = 20

// Every process of the uid is gone when this resolves: a helper running as that uid sends SIGKILL to
// every process it may signal (kill -1 reaches all of the uid, setsid or not, and nothing else), always
// at least once, until /proc shows none alive; what the helper cannot reach (it could not start: no pids
// left) the worker kills itself. Throws when some still live after the deadline (stuck in the kernel):
// then nothing of the dispatch may be touched as root, and the slot claims no more.
export async function sweep(who: AgentIdentity, deadlineMs = SWEEP_DEADLINE_MS): Promise<void> {
  const until = Date.now() + deadlineMs
  for (;;) {
    await killAllAs(who)
    const left = liveProcesses(who.uid)
    if (left.length === 0) return
    if (Date.now() > until) {
      throw new Error(
        `uid ${who.uid} still runs ${left.length} process(es) (pid ${left.slice(0, 5).join(', ')})`,
      )
    }
    for (const pid of left) killIfStill(pid, who.uid)
    await new Promise((r) => setTimeout(r, SWEEP_PAUSE_MS))
  }
}

// sweep() that answers whether no process of the uid is left; when some are, `warn` is told why and the
// caller touches nothing of the uid's (a live agent could swap a directory for a link under it).
export async function swept(who: AgentIdentity, warn: (why: string) => void): Promise<boolean> {
  try {
    await sweep(who)
    return true
  } catch (err) {
    warn((err as Error).message)
    return false
  }
}

// SIGKILL from the worker itself, to a pid that was just read as the uid's (read again right before).
function killIfStill(pid: number, uid: number): void {
  if (!ownedBy(readStatus(String(pid)), uid)) return
  try {
    process.kill(pid, 'SIGKILL')
  } catch {
    // it ended
  }
}

function killAllAs(who: AgentIdentity): Promise<void> {
  return new Promise((resolve) => {
    // kill(-1) spares the caller itself; a fork racing it fails, as the kernel checks for a pending SIGKILL
    const helper = spawn('/bin/sh', ['-c', 'kill -9 -1 2>/dev/null; exit 0'], {
      uid: who.uid,
      gid: who.gid,
      cwd: '/',
      env: {},
      stdio: 'ignore',
    })
    helper.once('error', () => resolve())
    helper.once('close', () => resolve())
  })
}

// Processes whose real, effective or saved uid is `uid` and that still run a thread. A zombie is dead
// already (it waits only for its parent, and a PID 1 that does not reap may keep it forever) — unless
// only its main thread exited (pthread_exit) and other threads of it still run.
export function liveProcesses(uid: number): number[] {
  const pids: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    const status = readStatus(name)
    if (ownedBy(status, uid) && (isRunning(status) || runningThread(name))) pids.push(Number(name))
  }
  return pids
}

function ownedBy(status: string | undefined, uid: number): boolean {
  const ids = /^Uid:\s*(\d+)\s+(\d+)\s+(\d+)/m.exec(status ?? '')
  return ids?.slice(1, 4).some((id) => Number(id) === uid) ?? false
}

function isRunning(status: string | undefined): boolean {
  return status !== undefined && !/^State:\s*[ZX]/m.test(status)
}

function runningThread(pid: string): boolean {
  try {
    return readdirSync(`/proc/${pid}/task`).some((task) => isRunning(readStatus(`${pid}/task/${task}`)))
  } catch {
    return false
  }
}

function readStatus(pid: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/status`, 'utf8')
  } catch {
    // it ended while we looked
    return undefined
  }
}

// The agent's HOME and TMPDIR for one dispatch, beside its workspace in the workdir.
export function privateDirs(workdir: string, name: string): { HOME: string; TMPDIR: string } {
  return { HOME: join(workdir, `${name}.home`), TMPDIR: join(workdir, `${name}.tmp`) }
}

// Every directory of the slot uid's for one dispatch beside its workspace: HOME, TMPDIR and the
// baseline's scratch. Removed together when the dispatch ends.
export function agentDirs(workdir: string, name: string): string[] {
  return [...Object.values(privateDirs(workdir, name)), scratchPath(workdir, name)]
}

// Makes HOME and TMPDIR afresh, mode 0700 and owned by the slot uid, after removing what a worker that
// died left under these names (a walk that follows no link, whoever wrote there since).
export async function makePrivateDirs(workdir: string, name: string, who: AgentIdentity): Promise<void> {
  await removeAgentTrees(agentDirs(workdir, name), who)
  for (const dir of Object.values(privateDirs(workdir, name))) await ownDir(dir, who)
}

// mkdir in the workdir, root's and 0711, where no agent uid may create or swap an entry: made anew
// (it fails when something is there), then given to the slot uid.
async function ownDir(dir: string, who: AgentIdentity): Promise<void> {
  await mkdir(dir, { mode: 0o700 })
  await lchown(dir, who.uid, who.gid)
}

const scratchPath = (workdir: string, name: string) => join(workdir, `${name}.baseline`)

// The baseline's scratch directory (git's temporary index, git running as the slot uid), made after
// setup's processes are gone, beside the workspace and not in TMPDIR: an agent may open its own
// directories to other uids, but not the workdir. The worker writes nothing in it. It stays until the
// dispatch ends, removed with HOME, TMPDIR and the workspace by one walk that follows no link (it is one
// of agentDirs): a removal of its own cost a process a dispatch, and what the agent may leave in it
// meanwhile is no more than what it may leave in its own HOME.
export async function agentScratch(workdir: string, name: string, who: AgentIdentity) {
  const dir = scratchPath(workdir, name)
  await ownDir(dir, who)
  return { dir }
}

// Gives a fresh clone (made by the worker, nothing of the agent's in it) to the slot uid. The top stays
// the worker's and closed (0700) until everything below it is handed over, bottom up, so no process of
// the slot uid could enter it meanwhile and swap a directory for a link; links are changed themselves,
// never followed; a file with more than one link (a hard link into another repository) is left alone.
export async function handOver(dir: string, who: AgentIdentity): Promise<void> {
  await chmod(dir, 0o700)
  await chownBelow(Buffer.from(dir), who, process.getuid?.() ?? 0)
  await lchown(dir, who.uid, who.gid)
}

// Synchronous calls, with a turn of the event loop before each directory is entered and after every
// 1,000 entries (a clone's biggest directory or deepest path holds the worker no longer than that): a
// promise and a trip to the thread pool for each of a clone's ~50 entries cost the worker more than the
// calls themselves. Names as bytes: a name that is not UTF-8 is handed over like any other.
async function chownBelow(
  dir: Buffer,
  who: AgentIdentity,
  own: number,
  turn = { left: TURN },
): Promise<void> {
  for (const entry of readdirSync(dir, { withFileTypes: true, encoding: 'buffer' })) {
    const path = Buffer.concat([dir, SLASH, entry.name])
    if (--turn.left === 0 || entry.isDirectory()) {
      turn.left = TURN
      await setImmediate()
    }
    // a Dirent's type is the entry's own: a link to a directory is not entered
    if (entry.isDirectory()) await chownBelow(path, who, own, turn)
    const info = lstatSync(path)
    if (info.uid !== own || (!info.isDirectory() && info.nlink > 1)) continue
    lchownSync(path, who.uid, who.gid)
  }
}

const TURN = 1_000
const SLASH = Buffer.from('/')

// Where one of `who` could replace `file`: the file itself or a directory on its way that one of them
// may write — on its real path, and on the path as given (a link in a directory they may write can be
// pointed elsewhere); a sticky directory only lets them move their own entries. undefined when nowhere.
export function writableBy(file: string, who: readonly AgentIdentity[]): string | undefined {
  return openOnChain(realpathSync(file), who) ?? openOnChain(dirname(resolve(file)), who)
}

// Where one of `who` could move `dir` away and put something else in its place (a link): a directory
// above it that one of them may write (sticky: only if it is `dir`'s owner), or `dir` itself when one of
// them owns it. undefined when nowhere.
export function movableBy(dir: string, who: readonly AgentIdentity[]): string | undefined {
  const info = lstatSync(dir)
  if (who.some((id) => id.uid === info.uid)) return dir
  return dir === '/' ? undefined : openOnChain(dirname(dir), who, info)
}

function openOnChain(
  start: string,
  who: readonly AgentIdentity[],
  below?: ReturnType<typeof statSync>,
): string | undefined {
  let path = start
  let child = below
  for (;;) {
    const info = statSync(path)
    const sticky = (info.mode & 0o1000) !== 0
    for (const id of who) {
      if (!mayAccess(id, info, Access.Write)) continue
      // in a sticky directory only an entry's owner may rename or remove it
      if (child && sticky && child.uid !== id.uid) continue
      return path
    }
    if (path === '/') return undefined
    child = info
    path = dirname(path)
  }
}

// Whether one of `who` may read `file` (reach it through its directories and read it).
export function readableBy(file: string, who: readonly AgentIdentity[]): boolean {
  const info = statSync(file)
  return who.some((id) => reachable(file, id, new Map()) && mayAccess(id, info, Access.Read))
}
