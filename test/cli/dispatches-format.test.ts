// The text of `preflight dispatches`: why each listed dispatch ended, and one dispatch in full.
import { describe, expect, it } from 'vitest'
import { formatDispatch, formatItem, formatItems } from '../../src/cli/dispatches-format.js'
import type { DispatchItem, DispatchView } from '../../src/contract/index.js'
import { colours } from '../../src/log/colour.js'

const base: DispatchItem = {
  id: '0c5e0000-0000-4000-8000-000000000001',
  status: 'queued',
  attempt: 0,
  maxAttempts: 3,
  subagent: { name: 'web', version: 2 },
  priority: 0,
  workerId: null,
  createdAt: '2026-06-07T08:00:00.000Z',
  updatedAt: '2026-06-07T08:00:00.000Z',
  endedAt: null,
}
const ended = { attempt: 1, workerId: 'w1', endedAt: '2026-06-07T08:05:00.000Z' }
const why = (item: Partial<DispatchItem>) =>
  formatItem({ ...base, ...ended, ...item })
    .split('\n')
    .slice(1, -1)

describe('formatItem', () => {
  it('heads a dispatch with when it was created, its status, subagent, id, attempts and worker', () => {
    expect(formatItem(base)).toBe(
      '2026-06-07T08:00:00.000Z  queued  web v2  dispatch 0c5e0000-0000-4000-8000-000000000001  attempt 0/3\n',
    )
    expect(formatItem({ ...base, ...ended, status: 'succeeded', exitCode: 0 }, 'ended')).toMatch(
      /^2026-06-07T08:05:00.000Z {2}succeeded .* attempt 1\/3 {2}worker w1\n {2}agent exited 0\n$/,
    )
  })

  it('setup_failed: the reason, the exit code and the last three lines of the output', () => {
    const setup = { reason: 'setup-exit', exitCode: 2, outputTail: 'one\ntwo\n\nthree\nfour\n' }
    expect(why({ status: 'setup_failed', setup })).toEqual([
      '  setup setup-exit (exit 2)',
      '  | two',
      '  | three',
      '  | four',
    ])
  })

  it('shows the controls in a setup output tail as escapes, never raw', () => {
    const setup = { reason: 'setup-exit', exitCode: 2, outputTail: 'ok\u001b[2K\rfake\u009b' }
    expect(why({ status: 'setup_failed', setup })).toEqual([
      '  setup setup-exit (exit 2)',
      '  | ok\\x1b[2K\\rfake\\x9b',
    ])
  })

  it('preflight_failed: each requirement not met, and how many more there were', () => {
    const failed = [
      { kind: 'exec' as const, requirement: 'pnpm', status: 'unmet' as const, reason: 'not-found' },
      { kind: 'paths' as const, requirement: 'src/**/*.ts', status: 'error' as const, reason: 'timeout' },
    ]
    expect(
      why({ status: 'preflight_failed', preflight: { outcome: 'unmet', failed, failedCount: 25 } }),
    ).toEqual(['  unmet  exec pnpm — not-found', '  error  paths src/**/*.ts — timeout', '  … 23 more'])
  })

  it('preflight_failed with every result met: the outcome the worker claimed', () => {
    expect(
      why({ status: 'preflight_failed', preflight: { outcome: 'error', failed: [], failedCount: 0 } }),
    ).toEqual(['  preflight error'])
  })

  it('expired: the last fault, or that none was posted', () => {
    const fault = { message: 'git write-tree exited 128', attempt: 2, at: '2026-06-07T08:04:00.000Z' }
    expect(why({ status: 'expired', fault })).toEqual([
      '  fault in attempt 2 at 2026-06-07T08:04:00.000Z: git write-tree exited 128',
    ])
    expect(why({ status: 'expired' })).toEqual(['  no lease was renewed; no worker posted a fault'])
  })

  it('failed: the agent’s exit code', () => {
    expect(why({ status: 'failed', exitCode: 137 })).toEqual(['  agent exited 137'])
  })

  it('says when nothing matches', () => {
    expect(formatItems([])).toBe('no dispatches match\n')
  })
})

describe('formatDispatch', () => {
  const view: DispatchView = {
    id: base.id,
    status: 'setup_failed',
    attempt: 1,
    maxAttempts: 3,
    subagent: { name: 'web', version: 2 },
    priority: 0,
    workspace: { repo: 'https://git.example/app.git', ref: 'main' },
    events: [
      { step: 'created', at: '2026-06-07T08:00:00.000Z', attempt: 0 },
      { step: 'claimed', at: '2026-06-07T08:00:01.000Z', attempt: 1, detail: { workerId: 'w1' } },
      {
        step: 'setup-failed',
        at: '2026-06-07T08:00:09.000Z',
        attempt: 1,
        detail: { detail: 'x\nlast line' },
      },
    ],
    eventCount: 250,
    completion: {
      status: 'setup_failed',
      reason: 'setup-exit',
      exitCode: 1,
      durationMs: 812.4,
      detail: 'first\nsecond\n',
      at: '2026-06-07T08:00:09.000Z',
    },
    createdAt: '2026-06-07T08:00:00.000Z',
    updatedAt: '2026-06-07T08:00:09.000Z',
  }

  it('prints every directory of the PATH an unmet exec requirement was looked for in, none for a met one', () => {
    const path = Array.from({ length: 30 }, (_, i) => `/opt/toolchain-${i}/bin`)
    const result = (status: 'met' | 'unmet', requirement: string) => ({
      kind: 'exec' as const,
      requirement,
      status,
      observed: { searched: path, ...(status === 'met' ? { resolved: '/usr/bin/git' } : {}) },
      durationMs: 1,
    })
    const text = formatDispatch({
      ...view,
      status: 'preflight_failed',
      preflight: {
        attempt: 1,
        outcome: 'unmet',
        decision: 'abort',
        declared: true,
        results: [result('met', 'git'), result('unmet', 'pnpm')],
        startedAt: view.createdAt,
        finishedAt: view.createdAt,
        createdAt: view.createdAt,
      },
    })
    expect(text.split('\n').filter((l) => l.startsWith('    searched '))).toEqual([
      `    searched ${path.join(':')}`,
    ])
  })

  it('prints the timeline, each event with its detail on one line, and says when older ones are left out', () => {
    const text = formatDispatch(view)
    expect(text).toContain('workspace https://git.example/app.git@main\n')
    expect(text).toContain('events (the last 3 of 250)\n')
    expect(text).toContain('  2026-06-07T08:00:01.000Z  #1  claimed  workerId w1\n')
    expect(text).toContain('  2026-06-07T08:00:09.000Z  #1  setup-failed  detail last line\n')
  })

  it('prints the completion and the whole stored output', () => {
    const text = formatDispatch(view)
    expect(text).toContain(
      'completion: setup_failed, reason setup-exit, exit 1, 812 ms, at 2026-06-07T08:00:09.000Z\n',
    )
    expect(text).toContain('output (its tail):\n  | first\n  | second\n')
  })

  it('prints what the agent used that no requirement declares, as an author would act on it', () => {
    const observed = {
      ...view,
      completion: {
        status: 'failed',
        exitCode: 127,
        reason: 'undeclared-requirement',
        at: '2026-06-07T08:00:09.000Z',
        observed: { source: 'trace', exec: [], paths: [] },
        undeclared: [
          { kind: 'exec', name: 'pnpm', state: 'missing', searched: '/usr/local/bin:/usr/bin:/bin' },
          { kind: 'exec', name: 'ls', state: 'present', path: '/usr/bin/ls' },
          { kind: 'paths', path: 'notes/plan.md', state: 'missing' },
        ],
      },
    }
    expect(formatDispatch(observed as DispatchView)).toContain(
      'completion: failed, reason undeclared-requirement, exit 127, at 2026-06-07T08:00:09.000Z\n' +
        'used, and declared by no requirement:\n' +
        '  pnpm was run and not found on /usr/local/bin:/usr/bin:/bin; no requirement declares it — add exec: [pnpm]\n' +
        '  ls was found at /usr/bin/ls, by luck; no requirement declares it — add exec: [ls]\n' +
        '  notes/plan.md was opened and was not there; no paths pattern matches it\n',
    )
  })

  // an agent's output may try to set the terminal's title, move the cursor or rewrite the line
  it('shows the controls in stored output as escapes, never raw', () => {
    const hostile = {
      ...view,
      completion: { ...view.completion, detail: 'ok\u001b]0;owned\u0007\rfake\u009b2K' },
    }
    const text = formatDispatch(hostile as DispatchView)
    expect(text).toContain('  | ok\\x1b]0;owned\\x07\\rfake\\x9b2K\n')
    // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for exactly those
    expect(text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/)
  })

  it('prints the report, unmet results first', () => {
    const result = (requirement: string, status: 'met' | 'unmet' | 'error') => ({
      kind: 'exec' as const,
      requirement,
      status,
      ...(status === 'met' ? {} : { reason: status === 'unmet' ? 'not-found' : 'timeout' }),
      observed: {},
      durationMs: 1,
    })
    const text = formatDispatch({
      ...view,
      status: 'preflight_failed',
      completion: undefined,
      preflight: {
        attempt: 1,
        outcome: 'unmet',
        decision: 'abort',
        declared: true,
        results: [result('node', 'met'), result('bun', 'error'), result('pnpm', 'unmet')],
        startedAt: view.createdAt,
        finishedAt: view.createdAt,
        createdAt: view.createdAt,
      },
    })
    const lines = text.slice(text.indexOf('preflight (attempt 1): unmet, abort')).split('\n')
    expect(lines.slice(1, 4).map((l) => l.trim().split(/\s+/).slice(0, 3).join(' '))).toEqual([
      'unmet exec pnpm',
      'error exec bun',
      'met exec node',
    ])
    expect(text).not.toContain('completion')
  })
})

// biome-ignore lint/suspicious/noControlCharactersInRegex: the colours' own sequences
const SGR = /\u001b\[\d+m/g
// biome-ignore lint/suspicious/noControlCharactersInRegex: looking for exactly those
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/
const on = colours(true)

describe('colour', () => {
  it('paints the status words, and nothing else changes', () => {
    const failed = { ...base, ...ended, status: 'preflight_failed' as const }
    const preflight = {
      outcome: 'unmet' as const,
      failed: [{ kind: 'exec' as const, requirement: 'pnpm', status: 'unmet' as const, reason: 'not-found' }],
      failedCount: 1,
    }
    const painted = formatItem({ ...failed, preflight }, 'created', on)
    expect(painted).toContain(on.red('preflight_failed'))
    expect(painted).toContain(`  ${on.red('unmet')}  exec pnpm`)
    expect(painted.replace(SGR, '')).toBe(formatItem({ ...failed, preflight }))
    expect(formatItems([{ ...base, ...ended, status: 'succeeded', exitCode: 0 }], on)).toContain(
      on.green('succeeded'),
    )
  })

  // the colours go in after what the coordinator sent was made visible: none of its controls get through
  it('keeps the controls of every field visible when it paints', () => {
    const esc = '\u001b]0;owned\u0007'
    const hostile = {
      ...base,
      ...ended,
      status: 'expired' as const,
      workerId: `w${esc}`,
      subagent: { name: `web${esc}`, version: 1 },
      fault: { message: `boom${esc}\nnext`, attempt: 1, at: ended.endedAt },
    }
    const text = formatItem(hostile as DispatchItem, 'ended', on)
    expect(text).toContain(on.red('expired'))
    expect(text.replace(SGR, '')).not.toMatch(RAW_CONTROL)
    const view = {
      id: base.id,
      status: `failed${esc}`,
      attempt: 1,
      maxAttempts: 3,
      subagent: { name: `web${esc}`, version: 2 },
      priority: 0,
      workspace: { repo: `r${esc}`, ref: `m${esc}` },
      labels: [`l${esc}`],
      metadata: { k: `v${esc}` },
      events: [{ step: `s${esc}`, at: base.createdAt, attempt: 1, detail: { d: `x${esc}` } }],
      eventCount: 1,
      preflight: {
        attempt: 1,
        outcome: 'unmet',
        decision: 'abort',
        declared: true,
        reason: `why${esc}`,
        results: [
          {
            kind: 'exec',
            requirement: `pnpm${esc}`,
            status: 'unmet',
            reason: `nf${esc}`,
            observed: { searched: [`/bin${esc}`] },
            durationMs: 1,
          },
        ],
        startedAt: base.createdAt,
        finishedAt: base.createdAt,
        createdAt: base.createdAt,
      },
      completion: {
        status: 'failed',
        reason: `r${esc}`,
        exitCode: 1,
        detail: `out${esc}`,
        at: base.createdAt,
      },
      createdAt: base.createdAt,
      updatedAt: base.createdAt,
    }
    const full = formatDispatch(view as unknown as DispatchView, on)
    expect(full).toContain(`completion: ${on.red('failed')}, `)
    expect(full.replace(SGR, '')).not.toMatch(RAW_CONTROL)
  })
})
