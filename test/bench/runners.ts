// The implementations the benchmark times: preflight's evaluator and two glob baselines (paths only).
import fs from 'node:fs'
import { readdir } from 'node:fs/promises'
import picomatch from 'picomatch'
import { glob } from 'tinyglobby'
import { type ContextRequires, listRequirements } from '../../src/contract/index.js'
import { checkers, evaluate, evaluationContext } from '../../worker/checks/index.js'
import { agentEnvironment } from '../../worker/env.js'

export interface RunStats {
  // directory entries read from the file system in this run
  entries: number
  // requirements decided met
  met: number
}

export type Runner = (workspace: string, requires: ContextRequires) => Promise<RunStats>

export const preflight: Runner = async (workspace, requires) => {
  const ctx = evaluationContext(requires, { workspace, env: agentEnvironment(process.env, []) })
  const results = await evaluate(listRequirements(requires), checkers, ctx)
  return { entries: ctx.listings.entriesRead, met: results.filter((r) => r.status === 'met').length }
}

// (a) per pattern, read the whole tree with readdir({ recursive: true }) and test every path with picomatch.
export const readdirRecursive: Runner = async (workspace, requires) => {
  let entries = 0
  let met = 0
  for (const pattern of requires.paths ?? []) {
    const all = await readdir(workspace, { recursive: true })
    entries += all.length
    const isMatch = picomatch(pattern, { dot: true })
    if (all.some((p) => isMatch(p))) met++
  }
  return { entries, met }
}

// (b) per pattern, tinyglobby with its default options; readdir is wrapped only to count entries.
export const tinyglobby: Runner = async (workspace, requires) => {
  let entries = 0
  const counting = {
    ...fs,
    readdir: ((path: fs.PathLike, options: unknown, callback: (err: unknown, files: unknown[]) => void) =>
      fs.readdir(path, options as { withFileTypes: true }, (err, files) => {
        entries += files?.length ?? 0
        callback(err, files)
      })) as typeof fs.readdir,
  }
  let met = 0
  for (const pattern of requires.paths ?? []) {
    if ((await glob(pattern, { cwd: workspace, fs: counting })).length > 0) met++
  }
  return { entries, met }
}

export const RUNNERS = { preflight, readdirRecursive, tinyglobby } satisfies Record<string, Runner>
export type RunnerName = keyof typeof RUNNERS
