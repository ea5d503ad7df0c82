// Without a tracer: the not-found messages real shells, env(1) and Node print, read from the output.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { notFoundIn } from '../../../worker/observe/output.js'

const stderrOf = (argv: string[]) =>
  spawnSync(argv[0] as string, argv.slice(1), { encoding: 'utf8', env: { PATH: '/usr/bin:/bin' } }).stderr

describe('notFoundIn', () => {
  it.each([
    ['dash', ['sh', '-c', 'pnpm-nowhere install']],
    ['dash, a script', ['sh', '-c', 'true\npnpm-nowhere']],
    ['bash', ['bash', '-c', 'pnpm-nowhere']],
    ['bash, a script line', ['bash', '-c', 'true; eval pnpm-nowhere']],
    ['env(1)', ['env', 'pnpm-nowhere']],
    [
      'Node',
      [
        process.execPath,
        '-e',
        "require('child_process').spawn('pnpm-nowhere').on('error', (e) => console.error(String(e)))",
      ],
    ],
  ])('reads %s', (_shell, argv) => {
    expect(notFoundIn(stderrOf(argv))).toContain('pnpm-nowhere')
  })

  it.runIf(existsSync('/usr/bin/zsh'))('reads zsh', () => {
    expect(notFoundIn(stderrOf(['zsh', '-c', 'pnpm-nowhere']))).toEqual(['pnpm-nowhere'])
  })

  it('takes a name only, never a path, and each once', () => {
    const tail =
      'sh: 1: ./scripts/build: not found\nsh: 2: pnpm: not found\nbash: pnpm: command not found\nall good'
    expect(notFoundIn(tail)).toEqual(['pnpm'])
    expect(notFoundIn('pnpm: not found in the changelog')).toEqual([])
  })
})
