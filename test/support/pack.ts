// The package as `npm pack` makes it, into `dir`: what an installed preflight holds. The .js is the
// suite's build and the .d.ts its declarations (both made once by test/global-setup.ts, before any file
// runs: two files building them at once would write the same declarations side by side).
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)
const root = join(import.meta.dirname, '..', '..')

export async function packInto(dir: string): Promise<{ tarball: string; files: string[] }> {
  // --ignore-scripts: `prepare` would run the whole build again, which the suite has done
  const packed = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], {
    cwd: root,
  })
  const [made] = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[]
  if (!made) throw new Error(`npm pack made no tarball: ${packed.stdout}`)
  return { tarball: join(dir, made.filename), files: made.files.map((f) => f.path) }
}
