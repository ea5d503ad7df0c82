import { describe, expect, it } from 'vitest'
import { REPO_SECRET_MESSAGE, redactRepo, repoHasSecret, Workspace } from '../../src/contract/index.js'

describe('a workspace.repo with a password or token', () => {
  it.each([
    'https://user:s3cret@github.com/acme/x.git',
    'https://ghp_TOKEN@github.com/acme/x.git',
    'HTTPS://ghp_TOKEN@github.com/acme/x.git',
    'http://user:s3cret@127.0.0.1:8080/x.git',
    'https://:s3cret@github.com/x.git',
    'https://a@b@github.com/x.git',
    'ssh://git:s3cret@github.com/acme/x.git',
    'git+ssh://git:s3cret@github.com/acme/x.git',
    'git://user:s3cret@example.invalid/x.git',
    'ssh://git:@github.com/acme/x.git',
  ])('is refused: %s', (repo) => {
    expect(repoHasSecret(repo)).toBe(true)
  })

  it.each([
    'https://github.com/acme/x.git',
    'https://github.com/acme/x@v1.git',
    'https://github.com/acme/x?user:pw@y',
    'ssh://git@github.com/acme/x.git',
    'ssh://git@github.com:22/acme/x.git',
    'git@github.com:acme/x.git',
    'git://example.invalid/x.git',
    '/srv/repos/x',
  ])('is allowed: %s', (repo) => {
    expect(repoHasSecret(repo)).toBe(false)
  })

  it('fails the contract with a message that says where credentials go and never quotes the value', () => {
    const parsed = Workspace.safeParse({ repo: 'https://user:s3cret-value@github.com/acme/x.git' })
    expect(parsed.success).toBe(false)
    expect(parsed.error?.issues).toEqual([
      expect.objectContaining({ path: ['repo'], message: REPO_SECRET_MESSAGE }),
    ])
    expect(JSON.stringify(parsed.error?.issues)).not.toContain('s3cret-value')
  })

  it('redacts the userinfo for messages, and leaves other values as they are', () => {
    expect(redactRepo('https://user:s3cret@github.com/acme/x.git')).toBe('https://***@github.com/acme/x.git')
    expect(redactRepo('https://a@b@github.com/x')).toBe('https://***@github.com/x')
    expect(redactRepo('git@github.com:acme/x.git')).toBe('git@github.com:acme/x.git')
  })
})
