// Shapes shared by the evaluator and the per-kind checkers.

import type { CheckResult, ContextRequires, Reason, Rejection } from '../../src/contract/index.js'
import type { GitRunner } from '../run/job-git.js'
import type { AgentIdentity } from '../run/process.js'
import type { DirectoryCache } from './listing.js'

// What a checker decides about one requirement; the evaluator adds kind, requirement and duration.
export interface Finding {
  status: CheckResult['status']
  reason?: Reason
  observed: Record<string, unknown>
}

export interface CheckContext {
  // absolute path of the workspace as given
  workspace: string
  // the agent environment: exec resolves on its PATH, git takes only its PATH
  env: Record<string, string>
  requires: ContextRequires
  // the job's git (bound to the agent's identity); when absent, one is found on env.PATH outside the workspace
  git?: GitRunner
  signal: AbortSignal
  timeoutMs: number
  maxEntries: number
  // directory listings shared by every paths check of one verify() call
  listings: DirectoryCache
  // per-call memo so that several checks of one kind share one probe (git runs once for both facts)
  memo: Map<string, unknown>
  // the uid/gid setup and the agent run as; when absent, checks judge what this process may do
  agent?: AgentIdentity
}

export type { AgentIdentity }

export type Checker = (requirement: string, ctx: CheckContext) => Promise<Finding>

export interface Rejected {
  path: string
  why: Rejection
}
