// Secrets out of a serialised log record: the credentials of any URL, bearer tokens,
// every string under a key named like a secret, and the process's own secrets wherever they appear.

export const REDACTED = '[redacted]'

// `scheme://userinfo@`: the userinfo runs to its last "@" before the host's end, as URLs read it.
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#"'\\<>]*@/gi
// `Bearer <token>`: an Authorization header's value, a curl line, an error message
const BEARER = /\b(bearer\s+)[^\s"'\\,;]+/gi
// "leaseToken":"…", "authorization":"…", "PREFLIGHT_TOKEN":"…" at any depth of a JSON record; a key
// that only contains such a word (tokenId, tokens) is not a secret.
const SECRET_KEY =
  /"([\w-]*?(?:token|password|passwd|secret|authorization|cookie|api[_-]?key))":"(?:[^"\\]|\\.)*"/gi

// Values this short would blank out ordinary words; tokens are at least 16 characters.
const MIN_SECRET_LENGTH = 8

// `known`: only the process's own secrets replaced, for a line no pattern can match.
export type Redact = ((line: string) => string) & { known(line: string): string }

// `secrets`: values known to this process (its token, the bootstrap tokens), replaced as they are and
// as JSON escapes them.
export function redactor(secrets: readonly string[] = []): Redact {
  const known = [
    ...new Set(
      secrets
        .filter((s) => s.length >= MIN_SECRET_LENGTH)
        .flatMap((s) => [s, JSON.stringify(s).slice(1, -1)]),
    ),
  ].sort((a, b) => b.length - a.length)
  const withoutKnown = (line: string) => {
    let out = line
    for (const secret of known) if (out.includes(secret)) out = out.split(secret).join(REDACTED)
    return out
  }
  const redact = (line: string) =>
    withoutKnown(
      line
        .replace(URL_USERINFO, `$1${REDACTED}@`)
        .replace(BEARER, `$1${REDACTED}`)
        .replace(SECRET_KEY, `"$1":"${REDACTED}"`),
    )
  return Object.assign(redact, { known: withoutKnown })
}
