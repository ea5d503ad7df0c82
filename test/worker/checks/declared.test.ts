// What the worker reads as declared, from whatever arrived: a valid contextRequires reads exactly as the
// contract lists it; anything else still yields a requirement (with the problem), so it fails closed.
import { describe, expect, it } from 'vitest'
import { type ContextRequires, listRequirements } from '../../../src/contract/index.js'
import { declaredRequirements } from '../../../worker/checks/declared.js'

const valid: Record<string, ContextRequires | undefined> = {
  absent: undefined,
  empty: {},
  'every kind': {
    paths: ['package.json', 'src/**/*.ts'],
    exec: ['git', 'node'],
    git: { worktree: true, history: false },
  },
  'git facts in the contract order, whatever the key order': { git: { history: true, worktree: false } },
  'keys in any order': { git: { worktree: true }, exec: ['sh'], paths: ['a'] },
  'empty lists and git': { paths: [], exec: [], git: {} },
}

describe('declaredRequirements of a valid contextRequires', () => {
  it.each(Object.entries(valid))('reads %s as the contract lists it', (_name, requires) => {
    expect(declaredRequirements(requires)).toEqual(listRequirements(requires))
  })
})

// [name, contextRequires as it arrived, [kind, requirement, problem?][]]
const malformed: [string, unknown, [string, string, string?][]][] = [
  ['paths as one string', { paths: 'src/**' }, [['paths', 'src/**', 'paths must be a list']]],
  ['exec as a number', { exec: 5 }, [['exec', '5', 'exec must be a list']]],
  ['paths as null', { paths: null }, [['paths', 'null', 'paths must be a list']]],
  [
    'entries that are not strings',
    { paths: ['a', 5, null, { x: 1 }] },
    [
      ['paths', 'a'],
      ['paths', '5', 'paths entries must be strings'],
      ['paths', 'null', 'paths entries must be strings'],
      ['paths', '{"x":1}', 'paths entries must be strings'],
    ],
  ],
  ['git: true', { git: true }, [['git', 'true', 'git must be an object of facts']]],
  ['git as a list', { git: ['worktree'] }, [['git', '["worktree"]', 'git must be an object of facts']]],
  ['git as null', { git: null }, [['git', 'null', 'git must be an object of facts']]],
  ['git as a string', { git: 'yes' }, [['git', 'yes', 'git must be an object of facts']]],
  [
    'git facts that are neither true nor false, and one this version does not know',
    { git: { clean: true, history: null, worktree: 'yes' } },
    [
      ['git', 'worktree', 'git.worktree must be true or false'],
      ['git', 'history', 'git.history must be true or false'],
      ['git', 'clean'],
    ],
  ],
  ['an unknown kind with a scalar', { nix: true }, [['nix', 'true']]],
  ['an unknown kind with null', { nix: null }, [['nix', 'null']]],
  ['an unknown kind with a string', { nix: 'hello' }, [['nix', 'hello']]],
  [
    'an unknown kind with a list',
    { nix: ['hello', 2] },
    [
      ['nix', 'hello'],
      ['nix', '2'],
    ],
  ],
  [
    'an unknown kind with an object',
    { nix: { hello: '1', jq: '1' } },
    [
      ['nix', 'hello'],
      ['nix', 'jq'],
    ],
  ],
  [
    'known kinds first, in contract order, then unknown ones in key order',
    { nix: ['a'], git: { worktree: true, clean: false }, exec: ['sh'], paths: ['p'], apt: ['b'] },
    [
      ['paths', 'p'],
      ['exec', 'sh'],
      ['git', 'worktree'],
      ['git', 'clean'],
      ['nix', 'a'],
      ['apt', 'b'],
    ],
  ],
]

describe('declaredRequirements of what the contract does not allow', () => {
  it.each(malformed)('reads %s as requirements that cannot be met', (_name, requires, rows) => {
    const expected = rows.map(([kind, requirement, problem]) => ({
      kind,
      requirement,
      ...(problem === undefined ? {} : { problem }),
    }))
    expect(declaredRequirements(requires)).toEqual(expected)
    for (const [i, req] of declaredRequirements(requires).entries()) {
      expect(Object.hasOwn(req, 'problem')).toBe(rows[i]?.[2] !== undefined)
    }
  })

  it.each([null, 'x', 5, true, ['paths']])(
    'refuses a contextRequires that is not an object (%j)',
    (requires) => {
      expect(() => declaredRequirements(requires)).toThrow(new TypeError('contextRequires must be an object'))
    },
  )
})
