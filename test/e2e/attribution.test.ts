// End to end: a worker started with --observe (as root, with --agent-uid, as in production) and agents
// that use what their definitions forgot. Without a tracer these skip, or fail with CI=true.
import { describe, expect, it } from 'vitest'
import { findTracer } from '../../worker/observe/trace.js'
import {
  agentOutbox,
  call,
  dispatch,
  e2eSuite,
  getDispatch,
  register,
  serveCoordinator,
  spawnWorker,
  TOKENS,
  waitForStatus,
} from '../support/e2e.js'

const tracer = findTracer()
const isRoot = process.getuid?.() === 0
const suite = e2eSuite({ 'package.json': '{}\n', 'notes/README.md': 'notes\n' })

describe('observing a dispatch', () => {
  it('has a tracer to observe with (CI=true: fails instead of skipping)', () => {
    if (typeof tracer === 'string' && process.env.CI === 'true') throw new Error(tracer)
  })

  it.runIf(typeof tracer === 'object' && isRoot)(
    'fails an agent that ran an undeclared missing program for that reason, and names what else it used',
    async () => {
      // the scratch directory passable (0711), so the slot uid reaches its workspace in it
      await agentOutbox(suite)
      const coordinator = await serveCoordinator(suite)
      const worker = spawnWorker(coordinator.url, {
        workdir: `${suite.scratch}/work`,
        args: ['--observe', '--agent-uid', '64800'],
      })
      await register(coordinator.url, {
        name: 'planner',
        contextRequires: { exec: ['cat'], paths: ['notes/README.md'] },
        agent: { command: ['sh', '-c', 'ls >/dev/null; cat notes/README.md notes/plan.md; pnpm install'] },
      })
      const id = await dispatch(coordinator.url, 'planner', { repo: suite.repo })
      await waitForStatus(coordinator.url, id, 60_000, [worker])
      const d = await getDispatch(coordinator.url, id)
      expect(d.status, JSON.stringify(d.preflight)).toBe('failed')
      expect(d.completion, JSON.stringify(d.completion)).toMatchObject({
        exitCode: 127,
        reason: 'undeclared-requirement',
      })
      expect(d.completion?.observed?.source).toBe('trace')
      // every traced call was read: the record is whole
      expect(d.completion?.observed).not.toHaveProperty('cut')
      const undeclared = d.completion?.undeclared ?? []
      expect(undeclared).toContainEqual({
        kind: 'exec',
        name: 'pnpm',
        state: 'missing',
        searched: expect.stringContaining('/usr/bin'),
        tried: 'run',
        step: 'agent',
      })
      expect(undeclared).toContainEqual(
        expect.objectContaining({ kind: 'exec', name: 'ls', state: 'present' }),
      )
      expect(undeclared).toContainEqual({ kind: 'paths', path: 'notes/plan.md', state: 'missing' })
      // declared, or the agent's own program: not undeclared
      const names = undeclared.map((need) => ('name' in need ? need.name : need.path))
      expect(names).not.toContain('cat')
      expect(names).not.toContain('sh')
      expect(names).not.toContain('notes/README.md')
      const page = await call<{ items: { id: string }[] }>(
        coordinator.url,
        'GET',
        '/v1/dispatches?reason=undeclared-requirement',
        TOKENS.operator,
      )
      expect(page.items.map((item) => item.id)).toEqual([id])
    },
  )
})
