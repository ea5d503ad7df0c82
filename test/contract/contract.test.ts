import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import {
  CheckResult,
  Code,
  CompleteRequest,
  ContextRequires,
  canonicalJson,
  hashDefinition,
  listRequirements,
  MAX_DETAIL_CHARS,
  normaliseDefinition,
  outcomeOf,
  Reason,
  SetupReason,
  SubagentDefinition,
} from '../../src/contract/index.js'
import { renderSchemas } from '../../src/contract/json-schema.js'

const rejects = (requires: unknown) => expect(ContextRequires.safeParse(requires).success).toBe(false)

describe('contextRequires validation', () => {
  it.each([
    ['an empty pattern', ''],
    ['an absolute pattern', '/etc/passwd'],
    ['a ".." segment', 'src/../../etc'],
    ['a trailing ".." segment', 'src/..'],
    ['a backslash', 'src\\main.ts'],
    ['a NUL', 'a\0b'],
    ['a negation', '!src/**'],
    // the "./" is dropped before picomatch reads the rest, which it would read as a negation
    ['a negation after "./"', './!zzz*'],
    ['a negation after "./" twice', '././!zzz*'],
    ['a negation after a ".." segment', 'a/../!zzz*'],
    ['a pattern over 512 characters', 'a'.repeat(513)],
    ['a pattern over 512 characters, each an emoji', '😀'.repeat(513)],
    ['a lone surrogate', 'a\udcff'],
    ['an empty segment', 'src//index.ts'],
    ['a trailing empty segment', 'dist//'],
    ['a "." segment', 'src/./index.ts'],
    ['a trailing "." segment', 'src/.'],
    ['a repeated leading "./"', '././src/*.ts'],
    ['nothing after "./"', './'],
    ['only "."', '.'],
    ['a ".." segment after a newline', 'x\n/../etc/passwd'],
  ])('rejects a path pattern with %s', (_why, pattern) => rejects({ paths: [pattern] }))

  it('accepts globs, dotfiles and names that merely contain two dots', () => {
    const ok = [
      'package.json',
      'src/**/*.ts',
      '.github/workflows/*.yml',
      'a..b',
      '{a,b}/[cd]?.x',
      'a'.repeat(512),
      '😀'.repeat(512),
      './src/*.ts',
      'dist/',
      'src/generated/**/',
      'docs/a(b).txt',
      '.github/.x/...',
    ]
    expect(ContextRequires.parse({ paths: ok }).paths).toEqual(ok)
  })

  it.each(['bin/node', '/usr/bin/git', '.hidden', '-rf', '', 'a b', 'x'.repeat(129)])(
    'rejects the exec name %j',
    (name) => rejects({ exec: [name] }),
  )

  it('accepts bare exec names', () => {
    expect(
      ContextRequires.parse({ exec: ['git', 'node', 'g++', 'python3.12', 'x'.repeat(128)] }).exec,
    ).toHaveLength(5)
  })

  it('rejects unknown keys at every level', () => {
    rejects({ files: ['a'] })
    rejects({ git: { worktree: true, bare: false } })
    expect(SubagentDefinition.safeParse({ name: 'a', agent: { command: ['x'], cwd: '/' } }).success).toBe(
      false,
    )
  })

  it('rejects more than 256 entries and repeated entries', () => {
    rejects({ paths: Array.from({ length: 257 }, (_, i) => `f${i}`) })
    rejects({ exec: Array.from({ length: 257 }, (_, i) => `b${i}`) })
    rejects({ exec: ['git', 'git'] })
    expect(ContextRequires.safeParse({ paths: Array.from({ length: 256 }, (_, i) => `f${i}`) }).success).toBe(
      true,
    )
  })
})

describe('definitions and their hash', () => {
  const plain = {
    name: 'frontend-fixer',
    description: 'fixes the frontend',
    agent: { command: ['claude', '-p', 'fix it'] },
  }

  it('pins the hash of a definition without contextRequires', () => {
    expect(canonicalJson(normaliseDefinition(plain))).toBe(
      '{"agent":{"command":["claude","-p","fix it"]},"description":"fixes the frontend","name":"frontend-fixer"}',
    )
    expect(hashDefinition(plain)).toBe('0be8bad9244eafd874ad4c6173600a2ed6720f5200ee55691393e4bede4ce6d1')
  })

  it('hashes an empty contextRequires exactly like none', () => {
    expect(hashDefinition({ ...plain, contextRequires: {} })).toBe(hashDefinition(plain))
    expect(hashDefinition({ ...plain, contextRequires: { paths: [], exec: [], git: {} } })).toBe(
      hashDefinition(plain),
    )
    expect(normaliseDefinition({ ...plain, contextRequires: {} })).not.toHaveProperty('contextRequires')
  })

  it('sorts keys at every level and keeps array order', () => {
    expect(canonicalJson({ b: [3, 1, { z: 1, a: 'é' }], a: null, B: true })).toBe(
      '{"B":true,"a":null,"b":[3,1,{"a":"é","z":1}]}',
    )
  })

  it('changes the hash when a requirement changes', () => {
    const a = hashDefinition({ ...plain, contextRequires: { exec: ['git'] } })
    const b = hashDefinition({ ...plain, contextRequires: { exec: ['git', 'node'] } })
    expect(a).not.toBe(b)
    expect(a).toMatch(/^[0-9a-f]{64}$/)
  })
})

describe('requirements and outcomes', () => {
  it('lists requirements in declaration order: paths, exec, then git', () => {
    const list = listRequirements({
      git: { history: false, worktree: true },
      exec: ['b', 'a'],
      paths: ['z', 'y'],
    })
    expect(list.map((r) => `${r.kind}:${r.requirement}`)).toEqual([
      'paths:z',
      'paths:y',
      'exec:b',
      'exec:a',
      'git:worktree',
      'git:history',
    ])
  })

  it('is met only when every result is met, unmet before error', () => {
    expect(outcomeOf([])).toBe('met')
    expect(outcomeOf([{ status: 'met' }, { status: 'error' }])).toBe('error')
    expect(outcomeOf([{ status: 'error' }, { status: 'unmet' }])).toBe('unmet')
  })
})

describe('stable codes', () => {
  // A result's reason must be a Code: every reason the worker or the judge writes has to pass.
  it.each(Object.values(Reason))('takes the reason "%s" as a result reason', (reason) => {
    expect(CheckResult.shape.reason.safeParse(reason).success).toBe(true)
  })

  it.each(Object.values(SetupReason))('takes the setup reason "%s" as a code', (reason) => {
    expect(Code.safeParse(reason).success).toBe(true)
  })
})

describe('completions', () => {
  const fence = { attempt: 1, leaseToken: 'lease' }
  const bodies = {
    'an agent exit': { ...fence, exitCode: 0 },
    'a setup failure': { ...fence, status: 'setup_failed', reason: 'setup-exit', detail: 'tail' },
    'what a cancelled dispatch had': { ...fence, status: 'cancelled', exitCode: 143 },
  }

  // optional and additive: a worker that never sends it writes what it wrote before
  it.each(Object.entries(bodies))('take the lines of output the log dropped with %s', (_, body) => {
    expect(CompleteRequest.safeParse({ ...body, outputDropped: 160_025 }).success).toBe(true)
    expect(CompleteRequest.safeParse(body).success).toBe(true)
  })

  // optional and additive, like outputDropped: an older worker's agent exit, without it, still parses
  it("take the agent's output tail with an agent exit, bounded as every completion's detail", () => {
    const exit = { ...fence, exitCode: 3, detail: 'to stdout\npanic' }
    expect(CompleteRequest.safeParse(exit).success).toBe(true)
    expect(CompleteRequest.safeParse({ ...exit, detail: 'x'.repeat(MAX_DETAIL_CHARS) }).success).toBe(true)
    expect(CompleteRequest.safeParse({ ...exit, detail: 'x'.repeat(MAX_DETAIL_CHARS + 1) }).success).toBe(
      false,
    )
  })

  it.each([-1, 1.5, '12'])('refuse %j as the lines of output dropped', (outputDropped) => {
    expect(CompleteRequest.safeParse({ ...bodies['an agent exit'], outputDropped }).success).toBe(false)
  })
})

describe('generated JSON Schemas', () => {
  it('match the zod contract (run `npm run schemas` after changing src/contract)', () => {
    for (const [file, text] of Object.entries(renderSchemas())) {
      expect(readFileSync(new URL(`../../schemas/${file}`, import.meta.url), 'utf8'), file).toBe(text)
    }
  })
})
