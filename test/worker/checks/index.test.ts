import { chmodSync } from 'node:fs'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { type ContextRequires, listRequirements, type Requirement } from '../../../src/contract/index.js'
import { type Checker, evaluate, evaluationContext, verify } from '../../../worker/checks/index.js'
import { repoWithCommit, testDir, write } from '../../support/checks.js'

const PATH = process.env.PATH ?? ''
const met: Checker = async () => ({ status: 'met', observed: {} })

function ctx(timeoutMs = 10_000) {
  return evaluationContext({}, { workspace: testDir(), env: { PATH }, timeoutMs })
}

const one = (kind: string, requirement = 'x') => [{ kind, requirement } as Requirement]

describe('evaluate: fail closed', () => {
  it('turns a checker that throws into error check-failed with the message', async () => {
    const boom: Checker = async () => {
      throw new Error('disk on fire')
    }
    const [result] = await evaluate(one('paths'), { paths: boom }, ctx())
    expect(result).toMatchObject({
      status: 'error',
      reason: 'check-failed',
      observed: { message: 'disk on fire' },
    })
  })

  it('takes the text of a thrown value that is not an Error', async () => {
    const boom: Checker = async () => {
      throw 'plain text'
    }
    const [result] = await evaluate(one('paths'), { paths: boom }, ctx())
    expect(result).toMatchObject({
      status: 'error',
      reason: 'check-failed',
      observed: { message: 'plain text' },
    })
  })

  it('turns a checker that throws synchronously into error check-failed', async () => {
    const boom = (() => {
      throw new Error('sync')
    }) as unknown as Checker
    const [result] = await evaluate(one('exec'), { exec: boom }, ctx())
    expect(result).toMatchObject({ status: 'error', reason: 'check-failed' })
  })

  it.each([
    ['a status it does not know', { status: 'fine', observed: {} }],
    ['no observed', { status: 'met' }],
    ['observed that is not an object', { status: 'met', observed: 'yes' }],
    ['observed null', { status: 'met', observed: null }],
    ['nothing', undefined],
    ['null', null],
    ['a string', 'met'],
  ])('turns a checker that answers with %s into error check-failed', async (_name, answer) => {
    const sloppy = (async () => answer) as unknown as Checker
    const [result] = await evaluate(one('paths'), { paths: sloppy }, ctx())
    expect(result).toEqual({
      kind: 'paths',
      requirement: 'x',
      status: 'error',
      reason: 'check-failed',
      observed: { message: 'no verdict' },
      durationMs: expect.any(Number),
    })
  })

  // Results are made from the declaration first: one that nothing could fill in stays error not-checked.
  it('keeps error not-checked for a requirement whose answer cannot even be read', async () => {
    const broken: Checker = async () =>
      ({
        status: 'unmet',
        observed: {},
        get reason(): never {
          throw new Error('unreadable')
        },
      }) as never
    const results = await evaluate(
      [
        { kind: 'paths', requirement: 'a' },
        { kind: 'exec', requirement: 'sh' },
      ],
      { paths: broken, exec: met },
      ctx(),
    )
    expect(results).toEqual([
      {
        kind: 'paths',
        requirement: 'a',
        status: 'error',
        reason: 'not-checked',
        observed: {},
        durationMs: 0,
      },
      { kind: 'exec', requirement: 'sh', status: 'met', observed: {}, durationMs: expect.any(Number) },
    ])
  })

  it('answers error unknown-kind for a kind with no checker', async () => {
    const results = await evaluate(
      [
        { kind: 'paths', requirement: 'a' },
        { kind: 'exec', requirement: 'node' },
      ],
      { paths: met },
      ctx(),
    )
    expect(results.map((r) => [r.status, r.reason])).toEqual([
      ['met', undefined],
      ['error', 'unknown-kind'],
    ])
    expect(results[1]?.observed).toEqual({ kind: 'exec' })
  })

  it('answers error unknown-kind for a kind this version does not know (version skew)', async () => {
    const [result] = await evaluate(one('nix'), { paths: met, exec: met, git: met }, ctx())
    expect(result).toMatchObject({ kind: 'nix', status: 'error', reason: 'unknown-kind' })
  })

  it('does not take a kind from the prototype of the checker table', async () => {
    const [result] = await evaluate(one('toString'), { paths: met }, ctx())
    expect(result).toMatchObject({ status: 'error', reason: 'unknown-kind' })
  })

  it('answers error timeout for a checker that runs past the timeout, and tells it to stop', async () => {
    let stopped = false
    const hangs: Checker = (_req, c) =>
      new Promise(() => {
        c.signal.addEventListener('abort', () => {
          stopped = true
        })
      })
    const [result] = await evaluate(one('git'), { git: hangs }, ctx(20))
    expect(result).toMatchObject({ status: 'error', reason: 'timeout', observed: { timeoutMs: 20 } })
    expect(stopped).toBe(true)
  })

  it('tells a checker that runs past the timeout why it is stopped', async () => {
    let why: unknown
    const hangs: Checker = (_req, c) =>
      new Promise(() => {
        c.signal.addEventListener('abort', () => {
          why = c.signal.reason
        })
      })
    await evaluate(one('git'), { git: hangs }, ctx(20))
    expect(why).toEqual(new Error('timed out after 20 ms'))
  })

  it('keeps a timeout an error even when the checker answers met after being told to stop', async () => {
    const late: Checker = (_req, c) =>
      new Promise((resolve) =>
        c.signal.addEventListener('abort', () => resolve({ status: 'met', observed: {} })),
      )
    const [result] = await evaluate(one('paths'), { paths: late }, ctx(20))
    expect(result).toMatchObject({ status: 'error', reason: 'timeout' })
  })

  it('runs the checks concurrently', async () => {
    // each checker waits for the other to start: run one after the other, both would time out
    let arrive: () => void = () => {}
    const both = new Promise<void>((resolve) => {
      let count = 0
      arrive = () => {
        if (++count === 2) resolve()
      }
    })
    const meet: Checker = async () => {
      arrive()
      await both
      return { status: 'met', observed: {} }
    }
    const results = await evaluate(
      [
        { kind: 'paths', requirement: 'a' },
        { kind: 'paths', requirement: 'b' },
      ],
      { paths: meet },
      ctx(2_000),
    )
    expect(results.map((r) => r.status)).toEqual(['met', 'met'])
  })
})

describe('evaluate: timing and order', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  // git starts first: its child process runs while the file system checks work on this thread.
  it('starts the git checks first, the others in declaration order, and answers in declaration order', async () => {
    const started: string[] = []
    const record: Checker = async (requirement) => {
      started.push(requirement)
      return { status: 'met', observed: {} }
    }
    const requirements = [
      { kind: 'paths', requirement: 'p1' },
      { kind: 'exec', requirement: 'e1' },
      { kind: 'git', requirement: 'worktree' },
      { kind: 'paths', requirement: 'p2' },
      { kind: 'exec', requirement: 'e2' },
      { kind: 'git', requirement: 'history' },
    ] as Requirement[]
    const results = await evaluate(requirements, { paths: record, exec: record, git: record }, ctx())
    expect(started).toEqual(['worktree', 'history', 'p1', 'e1', 'p2', 'e2'])
    expect(results.map((r) => r.requirement)).toEqual(['p1', 'e1', 'worktree', 'p2', 'e2', 'history'])
  })

  it('measures each check in milliseconds, to the microsecond', async () => {
    const slow: Checker = () =>
      new Promise((resolve) => setTimeout(() => resolve({ status: 'met', observed: {} }), 30))
    const [result] = await evaluate(one('paths'), { paths: slow }, ctx())
    const ms = result?.durationMs ?? -1
    expect(ms).toBeGreaterThanOrEqual(25)
    expect(ms).toBeLessThan(5_000)
    expect(Math.round(ms * 1000)).toBeCloseTo(ms * 1000, 6)
  })

  // Otherwise `preflight check` would wait out every check's timeout before it could exit.
  it('leaves no timer behind once every check has answered', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    await evaluate(one('paths'), { paths: met }, ctx(60_000))
    expect(vi.getTimerCount()).toBe(0)
  })
})

describe('verify: requirements a coordinator should have refused', () => {
  it('answers error invalid-requirement for an exec name with a slash or a path pattern that leaves the workspace', async () => {
    const ws = testDir()
    // `a/../../../bin/sh` starts as a name may: only the end of the name's grammar refuses it
    const exec = ['../../bin/sh', 'a/../../../bin/sh', 'sh']
    const requires = { exec, paths: ['/etc/passwd', '../x'] } as ContextRequires
    const verdict = await verify(requires, { workspace: ws, env: { PATH: '/usr/bin:/bin' } })
    expect(verdict.outcome).toBe('error')
    const byRequirement = Object.fromEntries(verdict.results.map((r) => [r.requirement, r]))
    for (const bad of ['../../bin/sh', 'a/../../../bin/sh', '/etc/passwd', '../x']) {
      expect(byRequirement[bad]).toMatchObject({
        status: 'error',
        reason: 'invalid-requirement',
        observed: { problem: expect.any(String) },
      })
    }
    expect(byRequirement.sh?.status).toBe('met')
  })

  // picomatch reads `!zzz*` (what is left of `./!zzz*`) as "anything not zzz…": met on almost any workspace
  it('answers error invalid-requirement for a negation behind "./", never met', async () => {
    const ws = testDir()
    write(ws, 'src/index.ts')
    const verdict = await verify({ paths: ['./!zzz*', '!zzz*'] }, { workspace: ws, env: {} })
    expect(verdict.outcome).toBe('error')
    expect(verdict.results.map((r) => [r.requirement, r.status, r.reason])).toEqual([
      ['./!zzz*', 'error', 'invalid-requirement'],
      ['!zzz*', 'error', 'invalid-requirement'],
    ])
  })

  // registration counts characters, an emoji as one: so does the worker, or it refused what was registered
  it('checks a pattern of 512 emoji, as registration takes it, and refuses one of 513', async () => {
    const ws = testDir()
    const verdict = await verify({ paths: ['😀'.repeat(512), '😀'.repeat(513)] }, { workspace: ws, env: {} })
    expect(verdict.results.map((r) => [r.status, r.reason])).toEqual([
      ['unmet', 'no-match'],
      ['error', 'invalid-requirement'],
    ])
  })

  it('answers error invalid-requirement for a path pattern not in normal form, though the file exists', async () => {
    const ws = testDir()
    write(ws, 'src/index.ts')
    const verdict = await verify(
      { paths: ['src//index.ts', 'src/./index.ts', 'src/index.ts'] },
      { workspace: ws, env: {} },
    )
    expect(verdict.results.map((r) => [r.requirement, r.status, r.reason])).toEqual([
      ['src//index.ts', 'error', 'invalid-requirement'],
      ['src/./index.ts', 'error', 'invalid-requirement'],
      ['src/index.ts', 'met', undefined],
    ])
  })

  it('names every rule a requirement breaks', async () => {
    const verdict = await verify({ paths: ['/..'] }, { workspace: testDir(), env: { PATH } })
    expect(verdict.results[0]?.observed.problem).toBe(
      'a path pattern must be relative to the workspace, not absolute; a path pattern must not contain a ".." segment',
    )
  })
})

// A definition the contract does not allow reaches verify() only through a coordinator or caller that
// did not validate it. Whatever its shape, no requirement it declares may be met or skipped.
describe('verify: a contextRequires of a shape the contract does not allow', () => {
  const shapes: [string, unknown, [string, string, string][]][] = [
    ['git that is not an object', { git: true }, [['git', 'true', 'invalid-requirement']]],
    [
      'a git fact that is not true or false',
      { git: { worktree: null } },
      [['git', 'worktree', 'invalid-requirement']],
    ],
    ['an unknown kind with a scalar', { nix: true }, [['nix', 'true', 'unknown-kind']]],
    ['paths as one glob', { paths: '*' }, [['paths', '*', 'invalid-requirement']]],
    ['exec as a number', { exec: 5 }, [['exec', '5', 'invalid-requirement']]],
    ['a path pattern that is not a string', { paths: [5] }, [['paths', '5', 'invalid-requirement']]],
  ]

  it.each(shapes)('answers %s with error, never met', async (_name, requires, rows) => {
    const ws = repoWithCommit()
    write(ws, '5')
    write(ws, '*')
    const verdict = await verify(requires as ContextRequires, { workspace: ws, env: { PATH } })
    expect(verdict.results.map((r) => [r.kind, r.requirement, r.reason])).toEqual(rows)
    expect(verdict.results.every((r) => r.status === 'error')).toBe(true)
    expect(verdict).toMatchObject({ outcome: 'error', declared: true })
  })

  it('refuses a contextRequires that is not an object rather than read it as nothing declared', async () => {
    await expect(
      verify(null as unknown as ContextRequires, { workspace: testDir(), env: { PATH } }),
    ).rejects.toThrow(TypeError)
  })
})

describe('verify', () => {
  it('answers one result per requirement in declaration order, naming the binary in observed', async () => {
    const ws = repoWithCommit()
    write(ws, 'src/a.ts')
    const requires = {
      paths: ['src/*.ts', 'missing.txt'],
      exec: ['sh', 'no-such-binary-xyz'],
      git: { worktree: true, history: true },
    }
    const verdict = await verify(requires, { workspace: ws, env: { PATH } })
    expect(verdict.results.map((r) => [r.kind, r.requirement])).toEqual(
      listRequirements(requires).map((r) => [r.kind, r.requirement]),
    )
    expect(verdict.results.map((r) => r.status)).toEqual(['met', 'unmet', 'met', 'unmet', 'met', 'met'])
    expect(verdict.results.filter((r) => r.kind === 'exec').map((r) => r.observed.name)).toEqual([
      'sh',
      'no-such-binary-xyz',
    ])
    expect(verdict).toMatchObject({ outcome: 'unmet', declared: true })
  })

  it('answers met with no results and declared false when nothing is declared', async () => {
    const verdict = await verify(undefined, { workspace: testDir(), env: { PATH } })
    expect(verdict).toMatchObject({ outcome: 'met', declared: false, results: [] })
    expect(Date.parse(verdict.finishedAt)).toBeGreaterThanOrEqual(Date.parse(verdict.startedAt))
  })

  it('is never met when a walk hits its bound', async () => {
    const ws = testDir()
    for (let i = 0; i < 20; i++) write(ws, `d/f${i}.txt`)
    write(ws, 'd/sub/target.md')
    const verdict = await verify({ paths: ['**/*.md'] }, { workspace: ws, env: { PATH }, maxEntries: 10 })
    expect(verdict.outcome).toBe('error')
    expect(verdict.results[0]).toMatchObject({ status: 'error', reason: 'walk-limit' })
  })

  it('judges for the agent identity it is given, and for this process without one', async () => {
    const ws = testDir()
    write(ws, 'package.json')
    // the workspace of this uid, closed to everyone else
    chmodSync(ws, 0o700)
    const agent = { uid: 4242, gid: 4242 }
    const asAgent = await verify({ paths: ['package.json'] }, { workspace: ws, env: { PATH }, agent })
    expect(asAgent.results[0]).toMatchObject({
      status: 'unmet',
      observed: { rejected: [{ path: 'package.json', why: 'unreachable' }] },
    })
    expect((await verify({ paths: ['package.json'] }, { workspace: ws, env: { PATH } })).outcome).toBe('met')
    expect(Object.hasOwn(evaluationContext({}, { workspace: ws, env: { PATH } }), 'agent')).toBe(false)
  })

  it('is error, not met, for a workspace that does not exist', async () => {
    const verdict = await verify({ paths: ['a'] }, { workspace: `${testDir()}/gone`, env: { PATH } })
    expect(verdict.results[0]).toMatchObject({ status: 'error', reason: 'check-failed' })
  })
})

describe('verify: version skew', () => {
  it('answers error unknown-kind for each entry of a kind this worker does not know, never skipping it', async () => {
    const requires = { paths: ['a'], nix: ['hello', 'jq'] } as unknown as ContextRequires
    const verdict = await verify(requires, { workspace: testDir(), env: { PATH } })
    expect(verdict.results.map((r) => [r.kind, r.requirement, r.status, r.reason])).toEqual([
      ['paths', 'a', 'unmet', 'no-match'],
      ['nix', 'hello', 'error', 'unknown-kind'],
      ['nix', 'jq', 'error', 'unknown-kind'],
    ])
  })

  it('answers error unknown-kind for a git fact this worker does not know', async () => {
    const requires = { git: { worktree: true, clean: true } } as unknown as ContextRequires
    const verdict = await verify(requires, { workspace: repoWithCommit(), env: { PATH } })
    expect(verdict.results.map((r) => [r.requirement, r.status, r.reason])).toEqual([
      ['worktree', 'met', undefined],
      ['clean', 'error', 'unknown-kind'],
    ])
    expect(verdict.outcome).toBe('error')
  })
})
