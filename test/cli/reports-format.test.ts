import { describe, expect, it } from 'vitest'
import { formatReports } from '../../src/cli/reports-format.js'
import type { ReportItem } from '../../src/contract/index.js'

// biome-ignore lint/suspicious/noControlCharactersInRegex: looking for exactly those
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/

describe('formatReports', () => {
  // an observed name is a file name in the agent's workspace: whatever bytes setup chose
  it('shows the controls in what the worker observed as escapes, never raw', () => {
    const item: ReportItem = {
      dispatchId: '0c5e0000-0000-4000-8000-000000000001',
      subagent: 'web',
      subagentVersion: 1,
      workerId: 'w1',
      attempt: 1,
      outcome: 'unmet',
      results: [
        {
          kind: 'paths',
          requirement: 'src/**',
          status: 'unmet',
          reason: 'no-match',
          observed: { rejected: [{ path: 'x\u001b]0;owned\u0007', why: 'unreachable' }] },
          durationMs: 1,
        },
      ],
      createdAt: '2026-06-07T08:00:00.000Z',
    }
    const text = formatReports([item])
    expect(text).toContain('x\\x1b]0;owned\\x07 (unreachable)')
    expect(text).not.toMatch(RAW_CONTROL)
  })
})
