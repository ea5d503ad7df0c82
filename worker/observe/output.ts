// Without a tracer: the programs a shell, env(1) or Node said it could not find, read from the output's
// tail. The program chose that output, so the record says it came from there (docs/attribution.md).
const NOT_FOUND = [
  // dash: `sh: 1: pnpm: not found`, `/bin/sh: 12: pnpm: not found`; `Permission denied` when a PATH entry
  // it could not search came last (a slot uid on a PATH with root's directories in it)
  /^\S*sh: \d+: (\S+): (?:not found|Permission denied)$/,
  // bash: `bash: pnpm: command not found`, `bash: line 1: pnpm: command not found`, `./run.sh: line 3: …`
  /^\S+: (?:line \d+: )?(\S+): command not found$/,
  // zsh: `zsh: command not found: pnpm`
  /^\S*zsh: command not found: (\S+)$/,
  // env(1): `env: ‘pnpm’: No such file or directory`
  /^env: [‘'](\S+)[’']: No such file or directory$/,
  // Node's child_process: `Error: spawn pnpm ENOENT`
  /\bspawn (\S+) ENOENT\b/,
]

export function notFoundIn(tail: string): string[] {
  const names = new Set<string>()
  for (const line of tail.split('\n')) {
    for (const pattern of NOT_FOUND) {
      const name = pattern.exec(line.trim())?.[1]
      if (name && !name.includes('/')) names.add(name)
    }
  }
  return [...names]
}
