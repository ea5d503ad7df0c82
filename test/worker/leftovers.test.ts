import { spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { ipcObjects, removeIpc, removeSharedEntries, worldWritableDirs } from '../../worker/leftovers.js'
import { testDir, write } from './checks/helpers.js'

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

  it("removes the uid's entries at the top of a shared directory, never what a link of it points at", async () => {
    const outside = testDir()
    const secret = write(outside, 'secret')
    const shared = testDir()
    chmodSync(shared, 0o1777)
    const as = (who: { uid: number; gid: number }, script: string) =>
      expect(spawnSync('sh', ['-c', script], { cwd: shared, ...who }).status).toBe(0)
    as(who, `echo x > file; mkdir -p dir/sub; echo x > dir/sub/f; ln -s ${secret} link; chmod 0777 dir`)
    as(other, 'echo x > theirs; echo x > dir/planted')
    await removeSharedEntries(who, [shared])
    for (const gone of ['file', 'dir', 'link']) expect(existsSync(join(shared, gone))).toBe(false)
    expect(existsSync(join(shared, 'theirs'))).toBe(true)
    expect(existsSync(secret)).toBe(true)
  })
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
