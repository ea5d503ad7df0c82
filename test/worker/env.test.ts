import { describe, expect, it } from 'vitest'
import { agentEnvironment } from '../../worker/env.js'

const worker = {
  PATH: '/usr/bin',
  HOME: '/home/w',
  LANG: 'C.UTF-8',
  LC_ALL: 'C',
  LC_CTYPE: 'C',
  TZ: 'UTC',
  TERM: 'xterm',
  USER: 'w',
  GIT_DIR: '/elsewhere/.git',
  AWS_SECRET_ACCESS_KEY: 'secret',
  NODE_OPTIONS: '--inspect',
}

describe('agentEnvironment', () => {
  it('keeps only PATH, HOME, LANG, LC_*, TZ, TERM and USER of the worker environment', () => {
    expect(agentEnvironment(worker, [])).toEqual({
      PATH: '/usr/bin',
      HOME: '/home/w',
      LANG: 'C.UTF-8',
      LC_ALL: 'C',
      LC_CTYPE: 'C',
      TZ: 'UTC',
      TERM: 'xterm',
      USER: 'w',
    })
  })

  it('passes the names the operator adds with --pass-env', () => {
    expect(agentEnvironment(worker, ['NODE_OPTIONS', 'NOT_SET'])).toMatchObject({ NODE_OPTIONS: '--inspect' })
    expect(agentEnvironment(worker, ['NOT_SET'])).not.toHaveProperty('NOT_SET')
  })

  it('lets agent.env of the definition win over the worker environment', () => {
    const env = agentEnvironment(worker, [], { PATH: '/opt/agent/bin', API_KEY: 'k' })
    expect(env.PATH).toBe('/opt/agent/bin')
    expect(env.API_KEY).toBe('k')
  })

  it('drops variables whose value is undefined', () => {
    // toStrictEqual: toEqual would take a name kept with the value undefined for one left out
    expect(agentEnvironment({ PATH: undefined, HOME: '/h' }, [])).toStrictEqual({ HOME: '/h' })
  })
})
