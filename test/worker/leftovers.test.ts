import { spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import {
  ipcObjects,
  removeIpc,
  removeSharedEntries,
  removeStaleDispatches,
  worldWritableDirs,
} from '../../worker/leftovers.js'
import { testDir, write } from '../support/checks.js'

const isRoot = process.getuid?.() === 0
const IPC_TABLES = [
  ['/proc/sysvipc/shm', 'shmid'],
  ['/proc/sysvipc/msg', 'msqid'],
  ['/proc/sysvipc/sem', 'semid'],
] as const

const ipcOf = (uid: number) => IPC_TABLES.flatMap(([file, id]) => ipcObjects(file, id, uid))

// ipcmk as the uid: a shared memory segment, a message queue and a semaphore set of its own
function makeIpc(who: { uid: number; gid: number }): void {
  for (const args of [['-M', '65536'], ['-Q'], ['-S', '1']]) {
    expect(spawnSync('ipcmk', args, { ...who }).status).toBe(0)
  }
}

describe.runIf(isRoot)('removeIpc', () => {
  const who = { uid: 62_210, gid: 62_210 }
  const other = { uid: 62_211, gid: 62_211 }
  afterEach(() => removeIpc(other))

  it("removes the uid's System V shared memory, message queues and semaphores, and no one else's", async () => {
    makeIpc(who)
    makeIpc(other)
    expect(ipcOf(who.uid)).toHaveLength(3)
    await removeIpc(who)
    expect(ipcOf(who.uid)).toEqual([])
    expect(ipcOf(other.uid)).toHaveLength(3)
  })
})

describe('ipcObjects', () => {
  it('reads the ids of objects the uid owns or created from a /proc/sysvipc table', () => {
    const table = write(
      testDir(),
      'shm',
      '       key      shmid perms   size  cpid  lpid nattch   uid   gid  cuid  cgid\n' +
        '         0         11   600  65536   100   100      0  5000  5000  5000  5000\n' +
        '         0         12   600  65536   100   100      0     0     0  5000  5000\n' +
        '         0         13   600  65536   100   100      0  5001  5001  5001  5001\n',
    )
    expect(ipcObjects(table, 'shmid', 5000)).toEqual(['11', '12'])
  })

  it('finds none where the kernel has no such table', () => {
    expect(ipcObjects('/proc/sysvipc/absent', 'shmid', 5000)).toEqual([])
  })
})

describe.runIf(isRoot)('removeSharedEntries', () => {
  const who = { uid: 62_220, gid: 62_220 }
  const other = { uid: 62_221, gid: 62_221 }
  const slots = [who, other]
  const as = (id: { uid: number; gid: number }, cwd: string, script: string) =>
    expect(spawnSync('sh', ['-c', script], { cwd, ...id }).status).toBe(0)
  const shared = () => {
    const dir = testDir()
    chmodSync(dir, 0o1777)
    return dir
  }

  it("removes the uid's entries at the top of a shared directory, never what a link of it points at", async () => {
    const secret = write(testDir(), 'secret')
    const dir = shared()
    as(
      who,
      dir,
      `echo x > file; mkdir -p sub/deeper; echo x > sub/deeper/f; ln -s ${secret} link; chmod 0777 sub`,
    )
    as(other, dir, 'echo x > theirs; echo x > sub/planted')
    await removeSharedEntries(who, [dir], slots)
    for (const gone of ['file', 'sub', 'link']) expect(existsSync(join(dir, gone))).toBe(false)
    expect(existsSync(join(dir, 'theirs'))).toBe(true)
    expect(existsSync(secret)).toBe(true)
  })

  // readdir decodes names as UTF-8: such a name, joined back, names nothing, and was skipped
  it('removes an entry whose name is not valid UTF-8', async () => {
    const dir = shared()
    as(who, dir, 'perl -e \'open(my $f, ">", "evil\\xff") or die\'')
    expect(readdirSync(dir)).toHaveLength(1)
    await removeSharedEntries(who, [dir], slots)
    expect(readdirSync(dir)).toEqual([])
  })

  // A slot's own world-writable directory: its agent could swap it for a link to / while root removes
  // the other uid's entry by path — so it is not swept at all (its owner's sweep takes it whole).
  it("leaves a directory a slot uid owns or could move alone: another slot's 0777 directory", async () => {
    const dir = shared()
    as(other, dir, 'mkdir -m 0777 mine && chmod 0777 mine')
    as(who, join(dir, 'mine'), 'echo x > planted')
    await removeSharedEntries(who, [join(dir, 'mine')], slots)
    expect(existsSync(join(dir, 'mine', 'planted'))).toBe(true)
  })

  // one rm command line for them all would be refused (E2BIG) and retire the slot for good
  it('removes more entries than one command line holds', async () => {
    const dir = shared()
    as(who, dir, `perl -e 'for (1..12000) { open(my $f, ">", ("n" x 190) . $_) or die }'`)
    await removeSharedEntries(who, [dir], slots)
    expect(readdirSync(dir)).toEqual([])
  }, 60_000)
})

describe('worldWritableDirs', () => {
  it('finds the directories every uid may write, sticky or not, and no other', async () => {
    const top = testDir()
    for (const [name, mode] of [
      ['open', 0o777],
      ['sticky', 0o1777],
      ['closed', 0o755],
    ] as const) {
      mkdirSync(join(top, name))
      chmodSync(join(top, name), mode)
    }
    writeFileSync(join(top, 'open', 'file'), 'x')
    expect((await worldWritableDirs(top)).sort()).toEqual([join(top, 'open'), join(top, 'sticky')])
  })
})

describe('removeStaleDispatches', () => {
  const id = '0b9d5b3e-6c1f-4a57-9d0e-1c2f3a4b5c6d'
  const plant = () => {
    const workdir = testDir()
    for (const name of [`${id}-1`, `${id}-1.home`, `${id}-2.tmp`, `${id}-2.baseline`, 'not-a-dispatch'])
      mkdirSync(join(workdir, name))
    return workdir
  }

  it("removes a dead worker's dispatch directories and nothing else", async () => {
    const workdir = plant()
    await removeStaleDispatches(workdir, false)
    expect(readdirSync(workdir)).toEqual(['not-a-dispatch'])
  })

  it('keeps the clones --keep-failed keeps, not their HOME, TMPDIR or scratch', async () => {
    const workdir = plant()
    await removeStaleDispatches(workdir, true)
    expect(readdirSync(workdir).sort()).toEqual([`${id}-1`, 'not-a-dispatch'])
  })
})
