// Closes the descriptors above 2 this process inherited without close-on-exec, so that no setup, agent
// or git it starts is given them (a child keeps every descriptor that lacks the flag).
//
// Node and libuv open every descriptor of their own with O_CLOEXEC, and at start mark 0-15 (and any run
// of open ones that follows) close-on-exec themselves (uv_disable_stdio_inheritance): a descriptor
// above 2 still without the flag was inherited past that run, from whatever started the worker.
import { closeSync, readdirSync, readFileSync } from 'node:fs'

const O_CLOEXEC = 0o2000000

export interface InheritedFds {
  // the descriptors closed
  closed: number[]
  // Node's IPC channel (NODE_CHANNEL_FD) when it lacked the flag: disconnected rather than closed under
  // Node's feet (the worker speaks no IPC); one with the flag is left as it is
  disconnected?: number
  // why nothing could be closed: /proc/self/fd could not be read
  why?: string
}

export function closeInheritedFds(channel = ipcChannel()): InheritedFds {
  let open: number[]
  try {
    open = readdirSync('/proc/self/fd').map(Number)
  } catch (err) {
    return { closed: [], why: (err as Error).message }
  }
  const inherited = open.filter((fd) => fd > 2 && !closeOnExec(fd)).sort((a, b) => a - b)
  const closed = inherited.filter((fd) => fd !== channel?.fd)
  for (const fd of closed) closeQuietly(fd)
  if (channel?.fd === undefined || !inherited.includes(channel.fd)) return { closed }
  channel.disconnect()
  return { closed, disconnected: channel.fd }
}

// Whether `fd` has close-on-exec; true for one gone since it was listed (the listing's own descriptor).
function closeOnExec(fd: number): boolean {
  let info: string
  try {
    info = readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8')
  } catch {
    return true
  }
  const flags = /^flags:\s*([0-7]+)$/m.exec(info)?.[1]
  return flags !== undefined && (Number.parseInt(flags, 8) & O_CLOEXEC) !== 0
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd)
  } catch {
    // EBADF: it is closed already, which is all this is for
  }
}

function ipcChannel(): { fd: number | undefined; disconnect(): void } | undefined {
  if (!process.channel || !process.disconnect) return undefined
  // the channel is a libuv pipe handle: its descriptor is `fd` (not in Node's types)
  const fd = (process.channel as unknown as { fd?: unknown }).fd
  return { fd: typeof fd === 'number' && fd >= 0 ? fd : undefined, disconnect: () => process.disconnect?.() }
}
