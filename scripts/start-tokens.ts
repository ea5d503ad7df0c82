// npm start's tokens, kept in its data directory (tokens.json, mode 600, in a directory of mode 700) so
// that exported variables and signed-in browsers outlive a restart: minted on the first start and on
// --rotate-tokens, reused on every other. PREFLIGHT_BOOTSTRAP_TOKENS pins the roles it names.
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { ROLES } from '../src/contract/roles.js'
import { MIN_TOKEN_LENGTH, parseBootstrapTokens } from '../src/coordinator/http/bootstrap-tokens.js'
import { bootstrapTokens, type Tokens } from './local.js'

export const tokensFile = (dataDir: string) => join(dataDir, 'tokens.json')

// Throws a one-sentence Error (naming no token) for a malformed PREFLIGHT_BOOTSTRAP_TOKENS or token file.
export async function startTokens(
  dataDir: string,
  { rotate = false, pinned = '' }: { rotate?: boolean; pinned?: string | undefined } = {},
): Promise<Tokens> {
  // parsed first: a malformed list changes no file
  const given = parseBootstrapTokens(pinned)
  const kept = (!rotate && (await readKept(dataDir))) || (await mint(dataDir))
  for (const { role, token } of given) kept[role] = token
  return kept
}

async function readKept(dataDir: string): Promise<Tokens | undefined> {
  const file = tokensFile(dataDir)
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  }
  const tokens = parseKept(text)
  if (!tokens) throw new Error(`${file} does not hold a token for every role; --rotate-tokens mints new ones`)
  // owner only, whatever a copy or an earlier version left
  await chmod(dataDir, 0o700)
  await chmod(file, 0o600)
  return tokens
}

// No JSON.parse message is passed on: it quotes the text, a token among it.
function parseKept(text: string): Tokens | undefined {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return undefined
  }
  if (typeof value !== 'object' || value === null) return undefined
  const record = value as Record<string, unknown>
  const valid = ROLES.every((role) => {
    const token = record[role]
    return typeof token === 'string' && token.length >= MIN_TOKEN_LENGTH && !/[\s,]/.test(token)
  })
  return valid ? (Object.fromEntries(ROLES.map((role) => [role, record[role]])) as Tokens) : undefined
}

async function mint(dataDir: string): Promise<Tokens> {
  const tokens = bootstrapTokens('')
  const file = tokensFile(dataDir)
  const temp = `${file}.${process.pid}.tmp`
  await mkdir(dataDir, { recursive: true, mode: 0o700 })
  await chmod(dataDir, 0o700)
  // written aside and renamed: a start stopped half-way leaves the old file or the new one, not half of one
  await writeFile(temp, `${JSON.stringify(tokens, null, 2)}\n`, { mode: 0o600 })
  await chmod(temp, 0o600)
  await rename(temp, file)
  return tokens
}
