// The worker's token, from PREFLIGHT_TOKEN or --token-file, and what became of the environment's copy.
import { readFile } from 'node:fs/promises'
import { type ScrubResult, scrubFromEnviron } from '../../worker/scrub-environ.js'
import { UsageError } from './errors.js'

// The worker token: PREFLIGHT_TOKEN or --token-file, never a command line (every local uid reads those).
// PREFLIGHT_TOKEN is taken out of this process's environment so no child is ever given it, and out of
// the kernel's copy of it, /proc/<pid>/environ, which outlives `delete process.env`.
export async function workerToken(
  flag: string | undefined,
  file: string | undefined,
): Promise<{ token: string; environ: ScrubResult }> {
  if (flag !== undefined) {
    throw new UsageError(
      '--token is not accepted (every local user can read a command line): use PREFLIGHT_TOKEN or --token-file FILE',
    )
  }
  const fromEnv = process.env.PREFLIGHT_TOKEN
  delete process.env.PREFLIGHT_TOKEN
  const environ: ScrubResult = fromEnv ? scrubFromEnviron('PREFLIGHT_TOKEN', fromEnv) : { scrubbed: true }
  return { token: await tokenOf(fromEnv, file), environ }
}

async function tokenOf(fromEnv: string | undefined, file: string | undefined): Promise<string> {
  if (file === undefined) {
    if (!fromEnv) throw new UsageError('give the worker token in PREFLIGHT_TOKEN or with --token-file FILE')
    return fromEnv
  }
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (err) {
    throw new UsageError(`cannot read --token-file ${file}: ${(err as NodeJS.ErrnoException).code ?? err}`)
  }
  const token = text.trim()
  if (!token) throw new UsageError(`--token-file ${file} is empty`)
  return token
}
