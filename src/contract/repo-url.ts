// A workspace.repo never carries a password or token: credentials belong to the worker (--git-credentials).

export const REPO_SECRET_MESSAGE =
  "a password or token in the URL is refused: put credentials in the worker's --git-credentials, not in the URL"

// The scheme and userinfo of a `scheme://userinfo@host/…` URL. The authority ends at the first "/", "?",
// "#" or "\" (git and curl stop there; WHATWG URLs read "\" as "/"), and userinfo runs to its last "@".
function userinfoOf(repo: string): { scheme: string; start: number; end: number } | undefined {
  const url = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#\\]*)/.exec(repo)
  const at = url?.[2]?.lastIndexOf('@') ?? -1
  if (!url?.[1] || at < 0) return undefined
  const start = url[1].length + 3
  return { scheme: url[1].toLowerCase(), start, end: start + at }
}

// A password for any scheme (`ssh://git:pw@host`), and any userinfo at all for http(s): a bare
// `https://TOKEN@host` is a token. `ssh://git@host/…` and git's scp-like `git@host:…` name only a user.
export function repoHasSecret(repo: string): boolean {
  const info = userinfoOf(repo)
  if (!info) return false
  return info.scheme === 'http' || info.scheme === 'https' || repo.slice(info.start, info.end).includes(':')
}

// The repo value with its userinfo replaced by "***", for messages about a refused value.
export function redactRepo(repo: string): string {
  const info = userinfoOf(repo)
  return info ? `${repo.slice(0, info.start)}***${repo.slice(info.end)}` : repo
}
