// exec: a bare name must resolve, on the agent's PATH and in its order, to an executable regular file.
import { realpathSync } from 'node:fs'
import { isAbsolute, resolve } from 'node:path'
import { Reason } from '../../src/contract/reasons.js'
import { agentAccess } from './access.js'
import { resolveOnDirs } from './resolve.js'
import type { CheckContext, Finding } from './types.js'

// PATH entries as execvp reads them; an empty or relative entry means a directory relative to the workspace.
function searchDirs(path: string | undefined, workspace: string): string[] {
  if (path === undefined) return []
  const dirs = path.split(':').map((entry) => (isAbsolute(entry) ? entry : resolve(workspace, entry)))
  return [...new Set(dirs)]
}

export async function checkExec(name: string, ctx: CheckContext): Promise<Finding> {
  const searched = searchDirs(ctx.env.PATH, ctx.workspace)
  const { found, rejected } = resolveOnDirs(name, searched, agentAccess(ctx))
  if (!found) return { status: 'unmet', reason: Reason.NotFound, observed: { name, searched, rejected } }
  return { status: 'met', observed: { name, path: found, realpath: realpathSync.native(found) } }
}
