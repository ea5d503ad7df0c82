// Removing trees an agent could write, as root, without ever following a link out of them.
//
// Node's fs.rm is path-based: between its look at a directory and its removal of what is below, another
// uid that may write there can swap the directory for a link, and root deletes what the link points at.
// GNU rm (coreutils) walks with gnulib's fts instead: each directory is opened with
// openat(parent_fd, name, O_NOFOLLOW|O_DIRECTORY) and its fstat checked against what was read of it, each
// entry is removed with unlinkat(dir_fd, name) — a link is removed itself, never entered, and a directory
// swapped mid-walk is refused, not followed. The same walk removes trees deeper than PATH_MAX, which
// fs.rm fails on (ENAMETOOLONG). --one-file-system: a mount point inside is left, and the removal fails.
import { spawnSync } from 'node:child_process'
import { lstatSync } from 'node:fs'
import type { AgentIdentity } from './process.js'
import { runQuietly } from './quietly.js'

const CANDIDATES = ['/usr/bin/rm', '/bin/rm']

let found: string | undefined

// GNU rm at a fixed path (never from PATH); throws when there is none (a busybox or BSD rm does not
// promise the walk above).
export function gnuRm(): string {
  if (found) return found
  for (const bin of CANDIDATES) {
    const version = spawnSync(bin, ['--version'], { env: {}, encoding: 'utf8' })
    if (version.status === 0 && version.stdout.includes('GNU coreutils')) {
      found = bin
      return bin
    }
  }
  throw new Error(
    `no GNU rm (coreutils) at ${CANDIDATES.join(' or ')}: --agent-uid removes agents' files with it`,
  )
}

// Removes each path and everything below it (absent ones are fine); as `who` when given, else as this
// process. Throws with rm's own words when something is left.
export async function removeTrees(paths: readonly string[], who?: AgentIdentity): Promise<void> {
  // no rm for what is not there (most often: what a crashed worker might have left, looked for first)
  const present = paths.filter((path) => lstatOrUndefined(path))
  if (present.length === 0) return
  const { code, stderr } = await runQuietly(gnuRm(), ['-rf', '--one-file-system', '--', ...present], {
    ...(who ? { uid: who.uid, gid: who.gid } : {}),
  })
  if (code !== 0) throw new Error(`rm exited ${code}: ${stderr.trim().split('\n').slice(0, 3).join('; ')}`)
}

function lstatOrUndefined(path: string) {
  try {
    return lstatSync(path)
  } catch {
    return undefined
  }
}

// The dispatch's own trees, when an agent uid could write in them: as root by the walk above, and what
// root's walk could not take (it refused a directory swapped under it), once more as the slot uid —
// which can remove nothing the agent could not have removed itself. Throws when something is still left.
export async function removeAgentTrees(paths: readonly string[], who: AgentIdentity): Promise<void> {
  try {
    await removeTrees(paths)
  } catch (first) {
    await removeTrees(paths, who).catch(() => {})
    await removeTrees(paths).catch((again: Error) => {
      throw new Error(`${(first as Error).message}; again: ${again.message}`)
    })
  }
}
