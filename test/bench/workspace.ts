// The synthetic ~100k-entry workspace of the check benchmark, generated once into a cache dir and reused.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'

// Bump when the shape changes so a stale cache is not reused.
const SHAPE_VERSION = 1
export const BENCH_WORKSPACE = join(tmpdir(), `preflight-bench-workspace-v${SHAPE_VERSION}`)

function put(root: string, rel: string, body = `// ${rel}\n`): void {
  const file = join(root, rel)
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, body)
}

// ≈18k files at 6 per directory: src/a{0..29}/b{0..9}/c{0..9}/
function writeSources(root: string): void {
  for (let a = 0; a < 30; a++)
    for (let b = 0; b < 10; b++)
      for (let c = 0; c < 10; c++)
        for (let f = 0; f < 6; f++) put(root, `src/a${a}/b${b}/c${c}/file${f}.${f % 3 === 0 ? 'tsx' : 'ts'}`)
}

// 20 packages of ≈950 files each, with their own package.json and tsconfig.json.
function writePackages(root: string): void {
  for (let p = 0; p < 20; p++) {
    put(root, `packages/pkg${p}/package.json`, `{"name":"pkg${p}"}\n`)
    put(root, `packages/pkg${p}/tsconfig.json`, '{}\n')
    for (let d = 0; d < 158; d++)
      for (let f = 0; f < 6; f++) put(root, `packages/pkg${p}/src/m${d % 16}/d${d}/f${f}.ts`)
  }
}

// ≈60k files in 370 packages (every 10th nested under another, every 7th with a tsconfig.json, .bin links).
function writeNodeModules(root: string): void {
  for (let n = 0; n < 370; n++) {
    const name = n === 0 ? 'typescript' : `dep${n}`
    const pkg = n % 10 === 9 ? `node_modules/dep${n - 1}/node_modules/${name}` : `node_modules/${name}`
    put(root, `${pkg}/package.json`, `{"name":"${name}"}\n`)
    if (n % 7 === 0) put(root, `${pkg}/tsconfig.json`, '{}\n')
    for (let d = 0; d < 20; d++) for (let f = 0; f < 8; f++) put(root, `${pkg}/lib/d${d}/f${f}.js`)
    if (n % 5 === 0) {
      mkdirSync(join(root, 'node_modules/.bin'), { recursive: true })
      symlinkSync(`../${name}/lib/d0/f0.js`, join(root, `node_modules/.bin/${name}`))
    }
  }
}

function writeTopLevel(root: string): void {
  put(root, 'package.json', '{"name":"bench","private":true}\n')
  put(root, 'tsconfig.json', '{}\n')
  put(root, 'README.md', '# bench\n')
  put(root, 'docs/README.md', '# docs\n')
  put(root, 'scripts/setup.sh', '#!/bin/sh\n')
  put(root, '.github/workflows/ci.yml', 'on: push\n')
  put(root, '.gitignore', 'node_modules/\n')
  put(root, '.editorconfig', 'root = true\n')
}

function commitAll(root: string): void {
  const git = (...args: string[]) => execFileSync('git', ['-C', root, ...args], { stdio: 'ignore' })
  git('init', '-q')
  git('add', '-A')
  git('-c', 'user.name=bench', '-c', 'user.email=bench@example.invalid', 'commit', '-q', '-m', 'one commit')
  git('repack', '-adq')
  git('prune-packed')
}

export function ensureBenchWorkspace(): string {
  if (existsSync(join(BENCH_WORKSPACE, '.ready'))) return BENCH_WORKSPACE
  rmSync(BENCH_WORKSPACE, { recursive: true, force: true })
  writeTopLevel(BENCH_WORKSPACE)
  writeSources(BENCH_WORKSPACE)
  writePackages(BENCH_WORKSPACE)
  writeNodeModules(BENCH_WORKSPACE)
  commitAll(BENCH_WORKSPACE)
  writeFileSync(join(BENCH_WORKSPACE, '.ready'), '')
  return BENCH_WORKSPACE
}
