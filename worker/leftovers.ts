// What a slot uid can leave on the machine outside its dispatch's own directories — entries in the
// world-writable directories, System V IPC objects — and their removal once no process of it is left,
// so the slot's next agent finds none of it.
import { spawn } from 'node:child_process'
import { existsSync, lstatSync, readFileSync } from 'node:fs'
import { lstat, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { movableBy } from './identity.js'
import type { AgentIdentity } from './run/process.js'
import { runQuietly } from './run/quietly.js'
import { gnuRm, removeTrees } from './run/remove.js'

// Where any uid may create entries on a usual Linux host, whichever filesystem holds them (tmpfs mounts
// are not on the root filesystem the scan below walks).
const KNOWN_SHARED = ['/tmp', '/var/tmp', '/dev/shm', '/run/lock', '/var/lock', '/dev/mqueue']

// GNU find, at a fixed path: it runs as root (src/cli/worker.ts checks that no slot uid may replace it)
export const FIND = existsSync('/usr/bin/find') ? '/usr/bin/find' : '/bin/find'

// the environment of the programs run here (find's -execdir refuses a relative PATH entry)
const PATH = { env: { PATH: '/usr/bin:/bin' } }

let shared: Promise<string[]> | undefined

// The known shared directories and every other world-writable directory on the root filesystem, found
// once per worker (a walk of the whole filesystem: ~1 s on a developer's machine, started at the
// worker's start and awaited by the first sweep that needs it).
export function sharedDirs(): Promise<string[]> {
  shared ??= worldWritableDirs('/').then((found) => [...new Set([...KNOWN_SHARED, ...found])])
  return shared
}

// The directories every uid may write on the filesystem of `top`, by find (none when it cannot run),
// what it found within `timeoutMs` when the walk takes longer (a huge filesystem must not hold up the
// first dispatch's end for ever).
export function worldWritableDirs(top: string, timeoutMs = 60_000): Promise<string[]> {
  return new Promise((resolve) => {
    const find = spawn(FIND, [top, '-xdev', '-type', 'd', '-perm', '-0002', '-print0'], {
      cwd: '/',
      env: { PATH: '/usr/bin:/bin' },
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: timeoutMs,
    })
    const chunks: Buffer[] = []
    find.stdout.on('data', (chunk: Buffer) => chunks.push(chunk))
    // without find the known list still holds; the docs say what a deployment must not add
    find.once('error', () => resolve([]))
    // each name ends in NUL: what follows the last one is a name cut short by the time bound
    find.once('close', () => resolve(Buffer.concat(chunks).toString('utf8').split('\0').slice(0, -1)))
  })
}

// Everything of the uid's outside its dispatch's directories: its entries in the shared directories
// and its System V IPC objects. Only once no process of it is left.
export async function removeLeftovers(who: AgentIdentity, slots: readonly AgentIdentity[]): Promise<void> {
  await removeSharedEntries(who, await sharedDirs(), slots)
  await removeIpc(who)
}

// Removes the uid's own entries at the top of the shared directories (below, its entries are in a
// directory of its own, or in another uid's, which goes with that uid's). Only directories no slot uid
// owns or could move away (`slots`: every slot of the worker): another slot's agent may be alive, and
// a directory of its own could be swapped for a link. GNU find selects by owner, whatever bytes a name
// holds, and runs rm from inside the directory it opened (-execdir: on `./name`, in batches): nothing
// is looked up by path again. Throws when an entry of the uid is still there.
export async function removeSharedEntries(
  who: AgentIdentity,
  dirs: readonly string[],
  slots: readonly AgentIdentity[],
): Promise<void> {
  const swept = dirs.filter((dir) => steady(dir, slots))
  // most dispatches leave nothing there: a look costs no process
  if ((await entriesOf(who.uid, swept)) === 0) return
  const select = [...swept, '-mindepth', '1', '-maxdepth', '1', '-user', String(who.uid)]
  // what find says is not the answer: the look after it is
  await runQuietly(FIND, [...select, '-execdir', gnuRm(), '-rf', '--one-file-system', '--', '{}', '+'], PATH)
  const left = await entriesOf(who.uid, swept)
  if (left > 0) throw new Error(`uid ${who.uid} still has ${left} entries in ${swept.join(', ')}`)
}

// How many entries at the top of `dirs` are the uid's. Names as bytes: one that is not UTF-8 is still
// looked at by its own name.
async function entriesOf(uid: number, dirs: readonly string[]): Promise<number> {
  let count = 0
  for (const dir of dirs) {
    const names = await readdir(dir, { encoding: 'buffer' }).catch(() => [] as Buffer[])
    for (const name of names) {
      const path = Buffer.concat([Buffer.from(`${dir}/`), name])
      if ((await lstat(path).catch(() => undefined))?.uid === uid) count++
    }
  }
  return count
}

// A real directory (not a link) that no slot uid owns or can replace.
function steady(dir: string, slots: readonly AgentIdentity[]): boolean {
  try {
    return lstatSync(dir).isDirectory() && movableBy(dir, slots) === undefined
  } catch {
    // not there (/dev/mqueue unmounted): nothing to sweep
    return false
  }
}

// System V shared memory, message queues and semaphore sets the uid owns or created: they live on in the
// kernel after every process of it is gone, and the next agent of the same uid could read them. ipcrm
// runs as the uid: the owner or creator may remove an object, root only with CAP_SYS_ADMIN, which a
// worker's container does not have.
export async function removeIpc(who: AgentIdentity, proc = '/proc/sysvipc'): Promise<void> {
  const args = IPC.flatMap(({ file, flag, id }) =>
    ipcObjects(join(proc, file), id, who.uid).flatMap((n) => [flag, n]),
  )
  if (args.length === 0) return
  // one that is gone already (its creator removed it meanwhile) makes ipcrm exit 1: read again
  await runQuietly('ipcrm', args, { ...PATH, uid: who.uid, gid: who.gid })
  const left = IPC.flatMap(({ file, id }) => ipcObjects(join(proc, file), id, who.uid))
  if (left.length > 0) throw new Error(`uid ${who.uid} still has System V IPC objects ${left.join(', ')}`)
}

const IPC = [
  { file: 'shm', flag: '-m', id: 'shmid' },
  { file: 'msg', flag: '-q', id: 'msqid' },
  { file: 'sem', flag: '-s', id: 'semid' },
] as const

// The ids of the objects in one /proc/sysvipc table whose owner or creator is `uid`.
export function ipcObjects(file: string, idColumn: string, uid: number): string[] {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    // no System V IPC in this kernel: nothing can be left there
    return []
  }
  const [header = '', ...rows] = text.split('\n')
  const columns = header.trim().split(/\s+/)
  const at = (name: string) => columns.indexOf(name)
  const ids: string[] = []
  for (const row of rows) {
    const cells = row.trim().split(/\s+/)
    const of = (name: string) => Number(cells[at(name)])
    if (of('uid') === uid || of('cuid') === uid) ids.push(String(cells[at(idColumn)]))
  }
  return ids
}

// A dispatch's directories in the workdir: `<id>-<attempt>` (the clone) and its `.home`, `.tmp` and
// `.baseline` (the slot uid's own).
const DISPATCH_DIR = /^[0-9a-f-]{36}-\d+(\.(home|tmp|baseline))?$/

// What a worker that died left in its workdir (root's, 0711: nothing an agent can swap): its
// dispatches' directories, but the clones --keep-failed keeps. The next dispatch of a slot runs as the
// same uid and could read them.
export async function removeStaleDispatches(workdir: string, keepFailed: boolean): Promise<void> {
  const names = (await readdir(workdir).catch(() => [] as string[])).filter((name) => {
    const match = DISPATCH_DIR.exec(name)
    return match !== null && (!keepFailed || match[1] !== undefined)
  })
  await removeTrees(names.map((name) => join(workdir, name)))
}
