// Credentials for prepare's clone of private repositories: files named by the worker's flags, handed to
// the clone's git runs as config on their command line (paths only, never a secret) and to nothing else —
// not the checks, not the baseline, not setup or the agent.
import { constants } from 'node:fs'
import { access, stat } from 'node:fs/promises'

export interface CloneCredentials {
  // --git-credentials: git's credential-store format, one `https://user:token@host` line per host
  gitCredentials?: string
  // --ssh-key with --ssh-known-hosts (one without the other is refused at start)
  ssh?: { key: string; knownHosts: string }
}

// The files that hold secrets, which the agents' uids must not be able to read (known_hosts holds
// public keys only: readable is fine).
export function secretFiles(config: { cloneCredentials?: CloneCredentials | undefined }): string[] {
  const credentials = config.cloneCredentials
  return [
    ...(credentials?.gitCredentials ? [credentials.gitCredentials] : []),
    ...(credentials?.ssh ? [credentials.ssh.key] : []),
  ]
}

// `-c` options for a clone over `transport`: the store helper for http(s), the ssh command for ssh.
export function credentialArgs(
  credentials: CloneCredentials | undefined,
  transport: string,
  gitBin: string,
): string[] {
  const file = credentials?.gitCredentials
  if (file && (transport === 'https' || transport === 'http'))
    // the empty value first: no helper from anywhere else is asked
    return ['-c', 'credential.helper=', '-c', `credential.helper=${storeHelper(gitBin, file)}`]
  if (credentials?.ssh && transport === 'ssh') return ['-c', `core.sshCommand=${sshCommand(credentials.ssh)}`]
  return []
}

// git runs a helper through the shell with the action appended: get, store or erase. Only `get` reaches
// credential-store: `store` rewrites the file after every clone (with the umask's mode, so perhaps
// readable by others) and `erase` deletes the host's line after one refused password.
export function storeHelper(gitBin: string, file: string): string {
  return `!f() { test "$1" != get || exec ${quote(gitBin)} credential-store --file=${quote(file)} get; }; f`
}

// The one key and known-hosts file, no ssh config (-F /dev/null: no ProxyCommand, no other identity),
// no prompt, and a host that is not in the known-hosts file is refused. Run by git through the shell.
export function sshCommand(ssh: { key: string; knownHosts: string }): string {
  return [
    'ssh',
    ...['-i', quote(ssh.key)],
    ...['-o', 'IdentitiesOnly=yes'],
    ...['-o', quote(`UserKnownHostsFile=${ssh.knownHosts}`)],
    ...['-o', 'StrictHostKeyChecking=yes'],
    ...['-F', '/dev/null'],
    ...['-o', 'BatchMode=yes'],
  ].join(' ')
}

// Absolute, and of characters that neither the shell, git's config, ssh's option parser (which splits a
// value at whitespace) nor ssh's `%` tokens read specially; quoted besides.
const SECRET_PATH = /^\/[A-Za-z0-9._/+@,=-]*$/

// Why a secret file cannot be used, or undefined: checked once at worker start.
export async function secretFileProblem(path: string): Promise<string | undefined> {
  if (!SECRET_PATH.test(path))
    return `${path}: the path may hold only letters, digits and "._/+@,=-" (it is read by a shell and by ssh)`
  const info = await stat(path).catch(() => undefined)
  if (!info) return `${path} does not exist`
  if (!info.isFile()) return `${path} is not a regular file`
  const readable = await access(path, constants.R_OK).then(
    () => true,
    () => false,
  )
  return readable ? undefined : `${path} is not readable by the worker`
}

function quote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`
}
