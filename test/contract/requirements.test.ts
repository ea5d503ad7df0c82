// contextRequires as the zod schemas read it (src/contract/requirements.ts): the grammar of light.ts, the
// bounds and messages of each list, and the requirements a definition declares.
import { describe, expect, it } from 'vitest'
import {
  ContextRequires,
  ExecName,
  GitRequirements,
  listRequirements,
  normaliseRequires,
  PathPattern,
} from '../../src/contract/index.js'

const many = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => f(i))

const messages = (value: unknown) =>
  ContextRequires.safeParse(value).error?.issues.map((i) => [i.path.join('.'), i.message]) ?? []

describe('ContextRequires', () => {
  it('takes at most 256 path patterns and 256 exec names, and says which list is over', () => {
    expect(messages({ paths: many(256, (i) => `f${i}`), exec: many(256, (i) => `e${i}`) })).toEqual([])
    expect(messages({ paths: many(257, (i) => `f${i}`) })).toEqual([['paths', 'at most 256 path patterns']])
    expect(messages({ exec: many(257, (i) => `e${i}`) })).toEqual([['exec', 'at most 256 exec names']])
  })

  it('refuses a list that repeats an entry, and says which', () => {
    expect(messages({ paths: ['a', 'b', 'a'] })).toEqual([['paths', 'path patterns must not repeat']])
    expect(messages({ exec: ['git', 'git'] })).toEqual([['exec', 'exec names must not repeat']])
    expect(messages({ paths: ['a', 'b'], exec: ['git', 'node'] })).toEqual([])
  })

  it('reads each path pattern with the grammar of light.ts, from one character to 512', () => {
    const problems = (pattern: string) => PathPattern.safeParse(pattern).error?.issues.map((i) => i.message)
    expect(problems('')).toEqual([
      'a path pattern must not be empty',
      'a path pattern must be relative to the workspace, not absolute',
      'a path pattern must be in normal form: no "." segment ("a/./b"), only one leading "./", and a name after it',
    ])
    expect(problems('a'.repeat(513))).toEqual(['a path pattern must be at most 512 characters'])
    expect(problems('src/../etc')).toEqual(['a path pattern must not contain a ".." segment'])
    for (const ok of ['a', 'src/**/*.ts', 'a'.repeat(512)]) expect(problems(ok), ok).toBeUndefined()
  })

  it('reads each exec name with the grammar of light.ts', () => {
    expect(ExecName.safeParse('a/../../../bin/sh').error?.issues.map((i) => i.message)).toEqual([
      'an exec name must be a bare binary name (letters, digits, "._+-"; no slash)',
    ])
    expect(ExecName.safeParse('node').success).toBe(true)
  })

  it('takes git as worktree and history, each a boolean, and nothing else', () => {
    expect(GitRequirements.safeParse({ worktree: true, history: false }).success).toBe(true)
    expect(GitRequirements.safeParse({ bare: true }).success).toBe(false)
    expect(GitRequirements.safeParse({ worktree: 'yes' }).success).toBe(false)
    expect(messages({ git: { worktree: true }, paths: ['a'], exec: ['git'] })).toEqual([])
    expect(ContextRequires.safeParse({ files: ['a'] }).success).toBe(false)
  })
})

describe('listRequirements', () => {
  it('lists nothing when there is no contextRequires, or an empty one', () => {
    expect(listRequirements(undefined)).toEqual([])
    expect(listRequirements({})).toEqual([])
    expect(listRequirements({ git: {} })).toEqual([])
  })

  it('lists only the kinds declared', () => {
    expect(listRequirements({ paths: ['a'] })).toEqual([{ kind: 'paths', requirement: 'a' }])
    expect(listRequirements({ exec: ['git'] })).toEqual([{ kind: 'exec', requirement: 'git' }])
    expect(listRequirements({ git: { history: true } })).toEqual([{ kind: 'git', requirement: 'history' }])
  })

  it('lists a git fact declared false: it is checked as well', () => {
    expect(listRequirements({ git: { worktree: false } })).toEqual([{ kind: 'git', requirement: 'worktree' }])
  })
})

describe('normaliseRequires', () => {
  it('drops what declares nothing: no contextRequires, empty lists, an empty git', () => {
    expect(normaliseRequires(undefined)).toBeUndefined()
    expect(normaliseRequires({})).toBeUndefined()
    expect(normaliseRequires({ paths: [], exec: [], git: {} })).toBeUndefined()
  })

  it('keeps each kind that declares something, and only those', () => {
    expect(normaliseRequires({ paths: ['a'], exec: [] })).toStrictEqual({ paths: ['a'] })
    expect(normaliseRequires({ exec: ['git'], git: {} })).toStrictEqual({ exec: ['git'] })
    expect(normaliseRequires({ paths: [], git: { worktree: false } })).toStrictEqual({
      git: { worktree: false },
    })
    const whole = { paths: ['a'], exec: ['git'], git: { history: true } }
    expect(normaliseRequires(whole)).toStrictEqual(whole)
  })
})
