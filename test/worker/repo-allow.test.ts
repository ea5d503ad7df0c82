import { describe, expect, it } from 'vitest'
import { refuseByPatterns, repoPatternProblem } from '../../worker/repo-allow.js'

const allowed = (repo: string, ...patterns: string[]) => refuseByPatterns(repo, patterns) === undefined

describe('--repo-allow patterns', () => {
  it('allows every repo when no pattern is given', () => {
    expect(allowed('https://anything.example/x.git')).toBe(true)
  })

  it('matches one segment with "*" and one or more with "**"', () => {
    expect(allowed('https://github.com/acme/x.git', 'https://github.com/acme/*')).toBe(true)
    expect(allowed('https://github.com/acme/team/x', 'https://github.com/acme/*')).toBe(false)
    expect(allowed('https://github.com/acme/team/x', 'https://github.com/acme/**')).toBe(true)
    expect(allowed('https://github.com/acme/', 'https://github.com/acme/**')).toBe(false)
    expect(allowed('https://github.com/acme/x-tools', 'https://github.com/acme/x-*')).toBe(true)
    expect(allowed('https://github.com/acme-evil/x', 'https://github.com/acme/*')).toBe(false)
    expect(allowed('git@github.com:acme/x.git', 'git@github.com:acme/*')).toBe(true)
    expect(allowed('ssh://git@github.com/acme/x.git', 'ssh://git@github.com/acme/*')).toBe(true)
  })

  it('takes everything but "*" literally', () => {
    expect(allowed('https://githubXcom/acme/x', 'https://github.com/acme/*')).toBe(false)
    expect(allowed('http://github.com/acme/x', 'https://github.com/acme/*')).toBe(false)
    expect(allowed('https://github.com:8443/acme/x', 'https://github.com/acme/*')).toBe(false)
  })

  it.each([
    ['a ".." climb out of the owner', 'https://github.com/acme/x/../../evil/y'],
    ['a "." segment', 'https://github.com/acme/./x'],
    ['a ".." after the scp-like host', 'git@github.com:../acme/x'],
    ['percent-encoding a server would decode', 'https://github.com/acme/x%2F..%2F..%2Fevil'],
    ['userinfo naming the allowed host', 'https://github.com@evil.example/acme/x'],
    ['a query hiding another host', 'https://github.com/acme/x?@evil'],
    ['a fragment before the allowed host', 'https://evil.example#.github.com/acme/x'],
    ['a backslash', 'https://github.com/acme/x\\@evil'],
    ['whitespace', 'https://github.com/acme/x y'],
    ['another port', 'https://github.com:1/acme/x'],
  ])('refuses %s', (_why, repo) => {
    expect(refuseByPatterns(repo, ['https://github.com/acme/**', 'https://*.github.com/**'])).toBeDefined()
  })

  it('says a percent-encoded or dotted repo is refused as such, whatever the patterns', () => {
    expect(refuseByPatterns('https://github.com/acme/x%2Fy', ['https://**'])).toMatch(/percent-encoded/)
    expect(refuseByPatterns('https://github.com/acme/./x', ['https://**'])).toMatch(/"\." or "\.\." segment/)
  })

  it('does not let "*" in a host reach past it', () => {
    const pattern = 'https://*.github.com/acme/*'
    expect(allowed('https://eu.github.com/acme/x', pattern)).toBe(true)
    expect(allowed('https://evil.example#.github.com/acme/x', pattern)).toBe(false)
    expect(allowed('https://evil.example/.github.com/acme/x', pattern)).toBe(false)
    expect(allowed('https://a@evil.example:.github.com/acme/x', pattern)).toBe(false)
  })

  it('compares scheme and host without case, and the path with it', () => {
    expect(allowed('HTTPS://GitHub.COM/acme/x', 'https://github.com/acme/*')).toBe(true)
    expect(allowed('https://github.com/acme/x', 'HTTPS://GITHUB.com/acme/*')).toBe(true)
    expect(allowed('git@GitHub.com:acme/x', 'git@github.com:acme/*')).toBe(true)
    expect(allowed('https://github.com/ACME/x', 'https://github.com/acme/*')).toBe(false)
    expect(allowed('ssh://Git@github.com/acme/x', 'ssh://git@github.com/acme/*')).toBe(false)
  })

  it('says why a repo was refused without quoting more than the repo and the patterns', () => {
    expect(refuseByPatterns('https://evil.example/x', ['https://github.com/acme/*'])).toBe(
      'https://evil.example/x matches no --repo-allow pattern of this worker (https://github.com/acme/*)',
    )
  })

  it.each([
    ['', 'is empty'],
    ['https://github.com/acme/x y', 'whitespace'],
    ['https://github.com/acme/%2A', '"%"'],
    ['https://github.com/acme/x?y', '"?"'],
    ['https://github.com/acme/../*', '".."'],
    ['https://github.com/acme/x**', '"**"'],
    ['https://github.com/***', '"**"'],
  ])('refuses the pattern %j', (pattern, why) => {
    expect(repoPatternProblem(pattern)).toContain(why)
  })

  it('accepts ordinary patterns', () => {
    for (const pattern of ['https://github.com/acme/*', 'https://**', 'git@github.com:acme/**', '/srv/git/*'])
      expect(repoPatternProblem(pattern)).toBeUndefined()
  })
})
