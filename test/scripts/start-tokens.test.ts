// npm start's kept tokens (scripts/start-tokens.ts) in a real temp directory: minted once into a file only
// its owner reads, reused after, minted again on --rotate-tokens, pinned by PREFLIGHT_BOOTSTRAP_TOKENS.
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { startTokens, tokensFile } from '../../scripts/start-tokens.js'

const mode = async (path: string) => (await stat(path)).mode & 0o777

describe("npm start's kept tokens", () => {
  let parent: string
  let dir: string
  beforeEach(async () => {
    parent = await mkdtemp(join(tmpdir(), 'preflight-start-tokens-'))
    dir = join(parent, '.preflight')
  })
  afterEach(() => rm(parent, { recursive: true, force: true }))

  it('mints a token per role on the first start, in a file only its owner can read', async () => {
    const tokens = await startTokens(dir)
    expect(Object.keys(tokens).sort()).toEqual(['admin', 'operator', 'orchestrator', 'worker'])
    expect(tokens.operator).toMatch(/^pf_operator_[0-9a-f]{32}$/)
    expect(JSON.parse(await readFile(tokensFile(dir), 'utf8'))).toEqual(tokens)
    expect(await mode(tokensFile(dir))).toBe(0o600)
    expect(await mode(dir)).toBe(0o700)
  })

  it('reuses them on the next start, and makes a loosened file and directory owner-only again', async () => {
    const first = await startTokens(dir)
    await chmod(tokensFile(dir), 0o644)
    await chmod(dir, 0o755)
    expect(await startTokens(dir)).toEqual(first)
    expect(await mode(tokensFile(dir))).toBe(0o600)
    expect(await mode(dir)).toBe(0o700)
  })

  it('mints new ones for every role when told to rotate, and keeps those', async () => {
    const first = await startTokens(dir)
    const rotated = await startTokens(dir, { rotate: true })
    for (const role of ['orchestrator', 'worker', 'operator', 'admin'] as const)
      expect(rotated[role]).not.toBe(first[role])
    expect(await startTokens(dir)).toEqual(rotated)
  })

  it('lets PREFLIGHT_BOOTSTRAP_TOKENS pin the roles it names, without keeping them', async () => {
    const kept = await startTokens(dir)
    const pinned = 'orchestrator:pinned-orchestrator-token'
    expect(await startTokens(dir, { pinned })).toEqual({ ...kept, orchestrator: 'pinned-orchestrator-token' })
    expect(await startTokens(dir)).toEqual(kept)
  })

  it('refuses a malformed PREFLIGHT_BOOTSTRAP_TOKENS before it writes a file', async () => {
    await expect(startTokens(dir, { pinned: 'orchestrator:short' })).rejects.toThrow(/at least 16/)
    await expect(stat(dir)).rejects.toThrow(/ENOENT/)
  })

  it('refuses a token file that does not hold every role, without quoting it', async () => {
    await startTokens(dir)
    const secret = 'pf_admin_0123456789abcdef0123456789abcdef'
    for (const text of [`${secret} not json`, JSON.stringify({ admin: secret })]) {
      await writeFile(tokensFile(dir), text)
      const refused = startTokens(dir)
      await expect(refused).rejects.toThrow(/does not hold a token for every role; --rotate-tokens/)
      await expect(refused).rejects.not.toThrow(secret)
    }
    expect(Object.keys(await startTokens(dir, { rotate: true }))).toHaveLength(4)
  })
})
