// A directory the kernel itself answers every lookup in with an errno (EIO, EACCES, EPERM, …): a FUSE file
// system served by a child process that replies to the handshake and then fails each request, the n-th
// with the n-th code given (the last one from then on). The real way to meet a disk fault or a refusal on
// PATH in a test, in this process, without injecting anything.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

// The server: mounts through /dev/fuse (fd 3 of mount(8)), answers FUSE_INIT, fails every other request.
const SERVER = `
import { openSync, readSync, writeSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { constants } from 'node:os'
const [mountpoint, list] = process.argv.slice(1)
const codes = list.split(',').map((code) => constants.errno[code])
let failed = 0
const fd = openSync('/dev/fuse', 'r+')
const options = 'fd=3,rootmode=40000,user_id=0,group_id=0'
const mount = spawnSync('mount', ['-t', 'fuse', '-o', options, 'preflight-errno', mountpoint], { stdio: ['ignore', 'ignore', 'ignore', fd] })
if (mount.status !== 0) process.exit(2)
process.stdout.write('ready\\n')
const request = Buffer.alloc(1 << 20)
for (;;) {
  try { readSync(fd, request, 0, request.length, null) } catch { break }
  const opcode = request.readUInt32LE(4)
  const unique = request.readBigUInt64LE(8)
  if (opcode === 2 || opcode === 42) continue // FORGET, BATCH_FORGET: no reply
  const init = opcode === 26
  const reply = Buffer.alloc(init ? 80 : 16)
  reply.writeUInt32LE(reply.length, 0)
  reply.writeInt32LE(init ? 0 : -codes[Math.min(failed++, codes.length - 1)], 4)
  reply.writeBigUInt64LE(unique, 8)
  if (init) {
    reply.writeUInt32LE(7, 16) // protocol 7.31
    reply.writeUInt32LE(31, 20)
    reply.writeUInt16LE(1, 32) // max_background
    reply.writeUInt16LE(1, 34) // congestion_threshold
    reply.writeUInt32LE(65536, 36) // max_write
    reply.writeUInt32LE(1, 40) // time_gran
  }
  try { writeSync(fd, reply) } catch {}
}
`

const mounted: { dir: string; server: ChildProcess }[] = []

// After each test (test/support/per-file.ts): every mount failingMount made, and its server.
export function unmountAll(): void {
  for (const { dir, server } of mounted.splice(0)) {
    try {
      execFileSync('umount', ['-l', dir], { stdio: 'ignore' })
    } catch {
      // not mounted any more
    }
    server.kill('SIGKILL')
    rmSync(dir, { recursive: true, force: true })
  }
}

type Errno = 'EIO' | 'EACCES' | 'EPERM' | 'ENOENT'

// FUSE needs /dev/fuse and the right to mount (root in CI); undefined where this machine cannot.
export async function failingMount(...codes: [Errno, ...Errno[]]): Promise<string | undefined> {
  if (process.getuid?.() !== 0 || !existsSync('/dev/fuse')) return undefined
  const dir = mkdtempSync(join(tmpdir(), 'preflight-errno-'))
  const server = spawn(process.execPath, ['--input-type=module', '-e', SERVER, dir, codes.join(',')], {
    stdio: ['ignore', 'pipe', 'ignore'],
  })
  mounted.push({ dir, server })
  const ready = await new Promise<boolean>((resolve) => {
    server.stdout?.once('data', () => resolve(true))
    server.once('exit', () => resolve(false))
  })
  return ready ? dir : undefined
}
