// Real git servers on 127.0.0.1 for the clone's tests: `git http-backend` behind HTTP basic auth, and
// `git daemon` for git://. Both serve the bare repositories under one root directory.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { rm } from 'node:fs/promises'
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { type AddressInfo, connect, createServer } from 'node:net'
import { join } from 'node:path'
import { git, makeRepo, tempDir } from './git-fixtures.js'

export interface GitServer {
  // the root URL, without a trailing "/": `${url}/name.git` is a repository
  url: string
  close(): Promise<void>
}

const EXEC_PATH = execFileSync('git', ['--exec-path'], { encoding: 'utf8' }).trim()

// A directory holding `<name>.git`, a bare copy of a repository with `files`.
export async function bareRepos(name: string, files: Record<string, string>): Promise<string> {
  const root = await tempDir('preflight-served-')
  const work = await makeRepo(files)
  git(root, 'clone', '-q', '--bare', work, join(root, `${name}.git`))
  await rm(work, { recursive: true, force: true })
  return root
}

// The environment of a server's own git: nothing of the test's user configuration.
function serverEnv(root: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: root,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
  }
}

// git's smart HTTP through git-http-backend (CGI). With `auth`, every request without those basic
// credentials is answered 401, as a private repository on a forge is. `onCredentials` runs while a
// request that carries credentials (right or wrong) waits for its answer.
export async function startHttpGitServer(
  root: string,
  auth?: { user: string; password: string },
  onCredentials?: () => void,
): Promise<GitServer & { requests(): number }> {
  let hits = 0
  const expected = auth && `Basic ${Buffer.from(`${auth.user}:${auth.password}`).toString('base64')}`
  const server = createHttpServer((req, res) => {
    hits++
    if (req.headers.authorization) onCredentials?.()
    if (expected && req.headers.authorization !== expected) {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="private"' }).end()
      return
    }
    serveCgi(root, auth?.user, req, res)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => hits,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

function serveCgi(root: string, user: string | undefined, req: IncomingMessage, res: ServerResponse) {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1')
  const header = (name: string) => req.headers[name]?.toString() ?? ''
  const backend = spawn(join(EXEC_PATH, 'git-http-backend'), [], {
    env: {
      ...serverEnv(root),
      GIT_PROJECT_ROOT: root,
      GIT_HTTP_EXPORT_ALL: '1',
      REQUEST_METHOD: req.method ?? 'GET',
      PATH_INFO: decodeURIComponent(url.pathname),
      QUERY_STRING: url.search.slice(1),
      CONTENT_TYPE: header('content-type'),
      REMOTE_ADDR: '127.0.0.1',
      ...(user ? { REMOTE_USER: user } : {}),
      ...(req.headers['content-length'] ? { CONTENT_LENGTH: header('content-length') } : {}),
      ...(req.headers['content-encoding'] ? { HTTP_CONTENT_ENCODING: header('content-encoding') } : {}),
      ...(req.headers['git-protocol'] ? { GIT_PROTOCOL: header('git-protocol') } : {}),
    },
    stdio: ['pipe', 'pipe', 'ignore'],
  })
  req.pipe(backend.stdin)
  const chunks: Buffer[] = []
  backend.stdout.on('data', (chunk: Buffer) => chunks.push(chunk))
  backend.on('close', () => {
    // a CGI answer: header lines, a blank line, the body (the repositories are small: buffered whole)
    const out = Buffer.concat(chunks)
    const end = out.indexOf('\r\n\r\n')
    const headers: Record<string, string> = {}
    let status = 200
    for (const line of out.subarray(0, end).toString('latin1').split('\r\n')) {
      const [name = '', ...value] = line.split(':')
      if (name.toLowerCase() === 'status') status = Number.parseInt(value.join(':').trim(), 10)
      else if (name) headers[name] = value.join(':').trim()
    }
    res.writeHead(status, headers).end(out.subarray(end + 4))
  })
}

// `git daemon` on a free port of 127.0.0.1, exporting every repository under `root`, with no
// authentication (git:// has none). Resolves once it accepts connections.
export async function startGitDaemon(root: string): Promise<GitServer> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort()
    const daemon = spawn(
      join(EXEC_PATH, 'git-daemon'),
      ['--export-all', '--reuseaddr', `--base-path=${root}`, '--listen=127.0.0.1', `--port=${port}`, root],
      // its own process group: it forks a child per connection, and close() ends them all
      { env: serverEnv(root), stdio: 'ignore', detached: true },
    )
    const close = () => stopGroup(daemon)
    if (await accepts(port, daemon)) return { url: `git://127.0.0.1:${port}`, close }
    await close()
    // the port was taken between freePort() and the daemon's bind: another one
    if (attempt === 5) throw new Error('git daemon did not start')
  }
}

async function stopGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  process.kill(-child.pid, 'SIGKILL')
  await exited
}

async function freePort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const { port } = probe.address() as AddressInfo
  await new Promise((resolve) => probe.close(resolve))
  return port
}

// Whether `port` accepts a connection while `daemon` runs, polled for up to 10 s: the daemon says
// nothing when it is ready.
async function accepts(port: number, daemon: ChildProcess): Promise<boolean> {
  const until = Date.now() + 10_000
  while (daemon.exitCode === null && Date.now() < until) {
    if (await connects(port)) return true
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return false
}

function connects(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}
