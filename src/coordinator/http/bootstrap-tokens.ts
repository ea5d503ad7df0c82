// PREFLIGHT_BOOTSTRAP_TOKENS read without zod or the database, so that `npm start`, which reads it too,
// loads neither (a bad argument is refused for a quarter of the CPU: 5 modules, not 254).
import type { Role } from '../../contract/index.js'
import { isRole, ROLES } from '../../contract/roles.js'

export const MIN_TOKEN_LENGTH = 16

// Parses "role:token,role:token"; throws a one-sentence Error when malformed.
export function parseBootstrapTokens(spec: string): { role: Role; token: string }[] {
  return spec
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((entry) => {
      const at = entry.indexOf(':')
      const role = entry.slice(0, Math.max(at, 0))
      const token = entry.slice(at + 1)
      if (at < 1 || !isRole(role)) {
        throw new Error(
          `PREFLIGHT_BOOTSTRAP_TOKENS: "${entry.slice(0, 20)}…" is not role:token with a role of ${ROLES.join(', ')}`,
        )
      }
      if (token.length < MIN_TOKEN_LENGTH) {
        throw new Error(
          `PREFLIGHT_BOOTSTRAP_TOKENS: the ${role} token must be at least ${MIN_TOKEN_LENGTH} characters`,
        )
      }
      return { role, token }
    })
}
