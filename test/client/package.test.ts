// preflight/client and preflight/contract as a project outside this repository meets them: the tarball
// `npm pack` makes, unpacked into a temporary project's node_modules (its own dependencies linked from
// this repository's, as an install would provide them), a consumer typechecked against the built
// declarations (strict; a wrong field is an error, so the types are real) and run against a live
// coordinator, and the tarball's `preflight` command run.
// The .js and the .d.ts come from the suite's build (test/global-setup.ts); the tarball from
// test/support/pack.ts, as tarball.test.ts installs it.
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { serve } from '@hono/node-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tokens, useTestApp } from '../support/app.js'
import { packInto } from '../support/pack.js'

const run = promisify(execFile)
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const tsc = join(root, 'node_modules/typescript/bin/tsc')

const CONSUMER = `
import { ApiError, type Client, createClient } from 'preflight/client'
import { type DispatchView, SubagentDefinition } from 'preflight/contract'

const [url = '', orchestrator = '', worker = ''] = process.argv.slice(2)
const client: Client = createClient({ url, token: orchestrator, retry: { budgetMs: 2_000, baseMs: 10, maxDelayMs: 50 } })
const definition = SubagentDefinition.parse({
  name: 'outside',
  description: 'from a project outside the repository',
  agent: { command: ['true'] },
  contextRequires: { exec: ['git'] },
})
const registered = await client.registerSubagent(definition)
const { id } = await client.createDispatch({ subagent: definition.name, workspace: { repo: 'https://git.example.invalid/a.git' } })
const claim = await createClient({ url, token: worker }).claimDispatch({ workerId: 'outside', waitMs: 0 })
const view: DispatchView = await client.getDispatch(id)
// @ts-expect-error the types are real: a dispatch has no such field
view.noSuchField
let refused = ''
try {
  await client.getDispatch('00000000-0000-4000-8000-000000000000')
} catch (err) {
  if (err instanceof ApiError) refused = \`\${err.status} \${err.code}\`
}
console.log(JSON.stringify({ version: registered.version, claimed: claim?.dispatch.id === id, status: view.status, refused }))
`

// A consumer that gets a type wrong: tsc must refuse it.
const WRONG = `import { createClient } from 'preflight/client'
await createClient({ url: 'http://x', token: 't' }).createDispatch({ subagent: 1, workspace: {} })
`

describe('preflight/client from outside the repository', () => {
  const h = useTestApp()
  let dir: string
  let url: string
  let close: () => void
  // tsc's error lines for the consumer and for WRONG
  let errors: string[]
  // the paths in the tarball
  let packedFiles: string[]

  beforeAll(async () => {
    if (!existsSync(join(root, 'dist/src/client/index.js')))
      throw new Error('dist/src/client/index.js is missing: run `npm run build` first')
    dir = await mkdtemp(join(tmpdir(), 'preflight-consumer-'))
    await mkdir(join(dir, 'node_modules/@types'), { recursive: true })
    // the package as an installed dependency would be: what the tarball holds, nothing else
    const { tarball, files } = await packInto(dir)
    packedFiles = files
    const pkg = join(dir, 'node_modules/preflight')
    await mkdir(pkg, { recursive: true })
    await run('tar', ['-xzf', tarball, '-C', pkg, '--strip-components=1'])
    await symlink(join(root, 'node_modules'), join(pkg, 'node_modules'), 'dir')
    await symlink(join(root, 'node_modules/@types/node'), join(dir, 'node_modules/@types/node'), 'dir')
    await writeFile(
      join(dir, 'package.json'),
      JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
    )
    await writeFile(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          types: ['node'],
          outDir: 'out',
          skipLibCheck: true,
        },
        include: ['consumer.ts', 'wrong.ts'],
      }),
    )
    await writeFile(join(dir, 'consumer.ts'), CONSUMER)
    await writeFile(join(dir, 'wrong.ts'), WRONG)
    // one tsc run for both files (a run is 3 s of CPU): it emits consumer.js whatever the errors
    errors = await run(process.execPath, [tsc, '-p', dir, '--pretty', 'false'], { cwd: dir }).then(
      () => [],
      (err) => String(err.stdout).split('\n').filter(Boolean),
    )
    const server = serve({ fetch: h.app.fetch, port: 0, hostname: '127.0.0.1' })
    await new Promise((r) => server.once('listening', r))
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    close = () => server.close()
  })

  afterAll(async () => {
    close?.()
    if (dir) await rm(dir, { recursive: true, force: true })
  })

  it('typechecks a consumer against the declarations, and runs it against a coordinator', async () => {
    expect(errors.filter((line) => !line.startsWith('wrong.ts'))).toEqual([])
    const { stdout } = await run(
      process.execPath,
      [join(dir, 'out/consumer.js'), url, tokens.orchestrator, tokens.worker],
      { cwd: dir },
    )
    expect(JSON.parse(stdout)).toEqual({
      version: 1,
      claimed: true,
      status: 'claimed',
      refused: '404 not-found',
    })
  })

  // Without "files", npm packed what .gitignore leaves: no dist/ (so no client, no command), but test/ and .ci/.
  it("packs what an installed package runs, and none of the repository's tests or CI", async () => {
    for (const path of ['bin/preflight.js', 'dist/src/client/index.js', 'dist/src/client/index.d.ts'])
      expect(packedFiles).toContain(path)
    expect(packedFiles.some((path) => path.startsWith('migrations/') && path.endsWith('.sql'))).toBe(true)
    expect(packedFiles.filter((path) => /^(test|\.ci|scripts|docs)\/|tsbuildinfo$/.test(path))).toEqual([])
    const { stdout } = await run(process.execPath, [
      join(dir, 'node_modules/preflight/bin/preflight.js'),
      '--version',
    ])
    expect(stdout.trim()).toBe(JSON.parse(await readFile(join(root, 'package.json'), 'utf8')).version)
  })

  it('refuses a consumer that gets a type wrong', () => {
    expect(errors.join('\n')).toMatch(/^wrong\.ts.*error TS2322/)
  })
})
