import { describe, expect, it } from 'vitest'
import { createLog, type LogOptions } from '../../src/log/log.js'

const TOKEN = 'preflight-token-0123456789abcdef'

function capture(opts: Partial<LogOptions> = {}) {
  const lines: string[] = []
  const log = createLog({
    name: 'worker',
    secrets: [TOKEN],
    stream: { write: (l) => lines.push(l) },
    ...opts,
  })
  return { log, lines, records: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) }
}

// Everything a careless caller might log: a URL with credentials, headers, a lease, the process's token.
function logSecrets(log: ReturnType<typeof capture>['log']) {
  log.warn(`clone of https://bot:url-password@git.example.test/r.git failed; token ${TOKEN}`, {
    repo: 'https://url-token-only@git.example.test/r.git',
    headers: { authorization: 'Bearer header-bearer-secret' },
    fence: { id: 'd1', attempt: 2, leaseToken: 'lease-token-secret' },
    err: new Error(`POST /v1/dispatches/d1/events: Bearer error-bearer-secret, ${TOKEN}`),
  })
}
const SECRETS =
  /url-password|url-token-only|header-bearer-secret|lease-token-secret|error-bearer-secret|0123456789abcdef/

describe('the log', () => {
  it('writes one JSON record per line: level by name, ISO time, the name and the fields', () => {
    const { log, records } = capture()
    log.info('claimed dispatch', { dispatchId: 'd1', attempt: 1, step: 'claim' })
    expect(records()).toEqual([
      expect.objectContaining({
        level: 'info',
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        name: 'worker',
        msg: 'claimed dispatch',
        dispatchId: 'd1',
        attempt: 1,
        step: 'claim',
      }),
    ])
  })

  it("carries a child's fields on every record of the child, and not on the parent's", () => {
    const { log, records } = capture()
    const child = log.child({ dispatchId: 'd1', attempt: 3 })
    child.child({ step: 'agent' }).info('a')
    log.info('b')
    expect(records()[0]).toMatchObject({ dispatchId: 'd1', attempt: 3, step: 'agent', msg: 'a' })
    expect(records()[1]).not.toHaveProperty('dispatchId')
  })

  it('writes a plain record as the same line info() writes, below its level nothing, and never a known secret', () => {
    const { log, lines } = capture({ level: 'info' })
    const fields = { reqId: 'r-1', method: 'POST', route: '/v1/x/:id', status: 201, durationMs: 1.5 }
    log.info('request', fields)
    log.plain?.('info', 'request', fields)
    log.plain?.('debug', 'request', fields)
    log.plain?.('info', 'request', { ...fields, reqId: TOKEN })
    expect(lines).toHaveLength(3)
    const [viaInfo, viaPlain, secret] = lines.map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(Object.keys(viaPlain ?? {})).toEqual(Object.keys(viaInfo ?? {}))
    expect({ ...viaPlain, time: 0 }).toEqual({ ...viaInfo, time: 0 })
    expect(Date.parse(String(viaPlain?.time))).toBeGreaterThan(0)
    expect(lines[2]).not.toContain(TOKEN)
    expect(secret?.reqId).toBe('[redacted]')
    // the pretty form has no plain path: its caller writes with info()
    expect(capture({ format: 'pretty' }).log.plain).toBeUndefined()
  })

  it('writes nothing below its level', () => {
    const { log, records } = capture({ level: 'warn' })
    log.debug('d')
    log.info('i')
    log.warn('w')
    log.error('e')
    expect(records().map((r) => r.level)).toEqual(['warn', 'error'])
  })

  it('never writes a secret, in JSON', () => {
    const { log, lines } = capture()
    logSecrets(log)
    expect(lines).toHaveLength(1)
    expect(lines[0]).not.toMatch(SECRETS)
    // what is not secret stays
    expect(lines[0]).toContain('git.example.test/r.git')
    expect(lines[0]).toContain('"attempt":2')
  })

  it('never writes a secret, in the pretty form', () => {
    const { log, lines } = capture({ format: 'pretty', colour: true })
    logSecrets(log)
    expect(lines.join('')).not.toMatch(SECRETS)
    expect(lines.join('')).toContain('git.example.test/r.git')
  })

  it('prints a record for a person in the pretty form, coloured only when asked', () => {
    const plain = capture({ format: 'pretty', colour: false })
    plain.log.warn('lease lost', { dispatchId: 'd1', why: 'a 409 said so' })
    expect(plain.lines.join('')).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} WARN {2}lease lost {2}dispatchId=d1 why="a 409 said so"\n$/,
    )
    const coloured = capture({ format: 'pretty', colour: true })
    coloured.log.warn('lease lost')
    expect(coloured.lines.join('')).toContain('\u001b[33mWARN \u001b[39m')
  })

  it("prints a program's output line as [dispatch step] line in the pretty form", () => {
    const { log, lines } = capture({ format: 'pretty', colour: false })
    log.child({ dispatchId: '0123456789abcdef', step: 'setup', output: true }).info('npm ci')
    expect(lines).toEqual(['[01234567 setup] npm ci\n'])
  })
})
