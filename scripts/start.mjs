// `npm start`'s entry: runs start.ts as tsc compiled it into dist/scripts/, in this process, with no
// TypeScript loader (tsx cost 0.75 s of every start). dist/ is built by `npm install` (`prepare`); it is
// built here when it is missing, and start.ts runs from its sources, through tsx, when one of its files
// was edited after the build.
import { spawnSync } from 'node:child_process'
import { existsSync, statSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const SCRIPTS = ['start', 'local', 'start-tokens']
const source = (name) => new URL(`./${name}.ts`, import.meta.url)
const compiled = (name) => new URL(`../dist/scripts/${name}.js`, import.meta.url)
const edited = (name) =>
  !existsSync(compiled(name)) || statSync(source(name)).mtimeMs > statSync(compiled(name)).mtimeMs

if (!existsSync(compiled('start')) || !existsSync(new URL('../dist/src/cli/bin.js', import.meta.url))) {
  const build = spawnSync('npm', ['run', 'build'], {
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    stdio: 'inherit',
  })
  if (build.status !== 0) {
    console.error(
      `npm start: npm run build failed (${build.error?.message ?? `exit code ${build.status ?? build.signal}`})`,
    )
    process.exit(1)
  }
}
if (SCRIPTS.some(edited)) {
  const { register } = await import('tsx/esm/api')
  register()
  await import(source('start').href)
} else await import(compiled('start').href)
