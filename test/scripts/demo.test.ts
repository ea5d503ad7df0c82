// `npm run demo` (scripts/demo.ts) with no coordinator to use: it starts its own, runs the two
// dispatches, and — its stdin not a terminal — says that the links it printed were to a coordinator it
// has stopped, rather than leaving them to fail.
import { spawn } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { waitExit } from '../../scripts/local.js'

describe('npm run demo without npm start', () => {
  it('runs both dispatches on its own coordinator and says its links stopped with it', async () => {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      // not npm start's or another test's slot uids (a worker sweeps every process of its own)
      PREFLIGHT_AGENT_UID: '64500',
      // a port nothing answers on: the demo starts its own
      PREFLIGHT_URL: 'http://127.0.0.1:9',
    }
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/demo.ts'], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout?.on('data', (b) => (output += b))
    child.stderr?.on('data', (b) => (output += b))
    const code = await waitExit(child)
    expect(code, output).toBe(0)
    expect(output).toContain('no coordinator answers; starting a private one at http://127.0.0.1:')
    expect(output).toMatch(/demo-needs-pnpm\s+preflight_failed/)
    expect(output).toMatch(
      /was the demo's own coordinator, stopped now: the links work while `npm start` runs/,
    )
  }, 120_000)
})
