// The agent environment (docs/worker.md, "Environments"): the worker's environment filtered to an allowlist, then agent.env on top.

const ALLOWED = new Set(['PATH', 'HOME', 'LANG', 'TZ', 'TERM', 'USER'])

function isAllowed(name: string, passEnv: ReadonlySet<string>): boolean {
  return ALLOWED.has(name) || name.startsWith('LC_') || passEnv.has(name)
}

export function agentEnvironment(
  source: NodeJS.ProcessEnv,
  passEnv: readonly string[],
  agentEnv: Record<string, string> = {},
): Record<string, string> {
  const pass = new Set(passEnv)
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(source)) {
    if (value !== undefined && isAllowed(name, pass)) env[name] = value
  }
  return { ...env, ...agentEnv }
}
