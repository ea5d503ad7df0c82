// A tree nested past the system's path length (PATH_MAX, 4096 bytes here): a directory the walk cannot
// list by its path still holds what it holds, so a glob that would have to look there is `error`
// walk-limit, never `unmet`. Made and removed with the shell (relative paths, `rm -rf`): Node's own
// calls take whole paths and fail there.
import { execFileSync } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Reason } from '../../../src/contract/index.js'
import { checkPaths } from '../../../worker/checks/paths.js'
import { context } from '../../support/checks.js'

let workspace: string
// `dd/` 1,500 times: 4,500 bytes below the workspace, made in two relative steps of less than PATH_MAX each
const HALF = Array(750).fill('dd').join('/')

beforeAll(() => {
  workspace = mkdtempSync(join(tmpdir(), 'preflight-deep-'))
  const script = `cd "$1" && mkdir -p ${HALF} && cd ${HALF} && mkdir -p ${HALF} && : > ${HALF}/needle`
  execFileSync('sh', ['-c', script, 'sh', workspace])
})

afterAll(() => {
  execFileSync('rm', ['-rf', workspace])
})

describe('paths below the path length limit', () => {
  it('is error walk-limit for a needle nested deeper than a path can be long, never unmet', async () => {
    const found = await checkPaths('**/needle', context(workspace))
    expect(found).toMatchObject({ status: 'error', reason: Reason.WalkLimit })
  })

  it('is still met where the match comes before the limit', async () => {
    expect(await checkPaths('dd/dd/**', context(workspace))).toMatchObject({
      status: 'met',
      observed: { match: 'dd/dd/dd' },
    })
  })

  it('is still unmet for a name the walk can rule out without going down', async () => {
    expect(await checkPaths('*.txt', context(workspace))).toMatchObject({ status: 'unmet' })
  })
})
