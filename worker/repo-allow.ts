// --repo-allow: the remotes a worker clones. In a pattern `*` is one path segment (or the rest of one) of
// ordinary characters, `**` one or more whole segments, and everything else is literal; scheme and host
// compare without case. No pattern: every remote of an allowed transport.

// Ordinary characters only: never "/", "@", ":", "?", "#", "%", "\" or whitespace, so a `*` cannot reach
// into the userinfo, the port, a query or a fragment, and cannot name another host.
const SEGMENT = '[A-Za-z0-9._~+-]+'

// Why a pattern is not one, or undefined: checked once at worker start.
export function repoPatternProblem(pattern: string): string | undefined {
  if (pattern === '') return 'is empty'
  if (/[\s%?#\\]/.test(pattern) || hasControl(pattern))
    return 'may not hold whitespace, "%", "?", "#" or "\\"'
  if (hasDotSegment(pattern)) return 'may not hold a "." or ".." segment'
  if (/[^/]\*\*|\*\*[^/]/.test(pattern)) return '"**" stands for whole segments: put it between "/"'
  return undefined
}

// Why `repo` may not be cloned under `patterns`, or undefined. A value whose meaning a server could
// change by decoding or normalising it (percent-encoding, "." and ".." segments) is refused outright.
export function refuseByPatterns(repo: string, patterns: readonly string[]): string | undefined {
  if (patterns.length === 0) return undefined
  if (repo.includes('%')) return `${repo} is percent-encoded, which --repo-allow does not match`
  if (hasDotSegment(repo)) return `${repo} has a "." or ".." segment, which --repo-allow does not match`
  const value = caseless(repo)
  if (patterns.some((pattern) => compile(pattern).test(value))) return undefined
  return `${repo} matches no --repo-allow pattern of this worker (${patterns.join(', ')})`
}

function compile(pattern: string): RegExp {
  const parts = caseless(pattern)
    .split(/(\*\*|\*)/)
    .map((part) => {
      if (part === '**') return `${SEGMENT}(?:/${SEGMENT})*`
      if (part === '*') return SEGMENT
      return part.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
    })
  return new RegExp(`^${parts.join('')}$`)
}

// Scheme and host in lower case, everything else as written: `HTTPS://GitHub.com/Acme/X` is
// `https://github.com/Acme/X`. The userinfo (up to the authority's last "@") keeps its case.
function caseless(value: string): string {
  const url = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^/?#\\]*)(.*)$/s.exec(value)
  if (url) {
    const [, scheme = '', authority = '', rest = ''] = url
    const at = authority.lastIndexOf('@') + 1
    return `${scheme.toLowerCase()}${authority.slice(0, at)}${authority.slice(at).toLowerCase()}${rest}`
  }
  // git's scp-like `[user@]host:path`: a ":" before any "/"
  const scp = /^([^/@:]*@)?([^/:]+)(:.*)$/s.exec(value)
  if (scp) return `${scp[1] ?? ''}${(scp[2] ?? '').toLowerCase()}${scp[3] ?? ''}`
  return value
}

function hasDotSegment(value: string): boolean {
  return value.split(/[/:\\]/).some((segment) => segment === '.' || segment === '..')
}

function hasControl(value: string): boolean {
  return [...value].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)
}
