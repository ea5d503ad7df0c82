// Fails `npm run test:mutation` when a target of docs/mutation.md is missed: a file under 90 %, a mutant that
// survived or that no test reached and is not listed as equivalent in stryker.config.mjs, a listed one that
// matches no mutant, or a `Stryker disable` comment in a mutated file (exclusions live in the config).
import { readFileSync } from 'node:fs'

export const MIN_SCORE = 90

interface Mutant {
  status: string
  statusReason?: string
  mutatorName: string
  replacement?: string
  location: { start: { line: number; column: number } }
}

export interface Report {
  files: Record<string, { source: string; mutants: Mutant[] }>
}

// A mutant whose run crashed the test runner (RuntimeError) made the tests fail to pass: detected, and
// each is named (crashes() below), so that a crash of the tooling itself is seen, not counted silently.
const DETECTED = new Set(['Killed', 'Timeout', 'RuntimeError'])
const UNDETECTED = new Set(['Survived', 'NoCoverage'])

// One line's equivalent mutants, as stryker.config.mjs lists them: [mutator, replacement] pairs.
export interface Equivalent {
  file: string
  code: string
  mutants: [string, string][]
  why: string
}

const lineOf = (source: string, m: Mutant) => source.split('\n')[m.location.start.line - 1]?.trim() ?? ''

const isThis = (e: Equivalent, [name, replacement]: [string, string], source: string, m: Mutant) =>
  m.mutatorName === name && m.replacement === replacement && lineOf(source, m).includes(e.code)

const listed = (equivalent: readonly Equivalent[], file: string, source: string, m: Mutant) =>
  equivalent.some((e) => e.file === file && e.mutants.some((pair) => isThis(e, pair, source, m)))

// An undetected mutant the config lists is equivalent (one a comment had Stryker ignore is left out too).
const isEquivalent = (equivalent: readonly Equivalent[], file: string, source: string, m: Mutant) =>
  UNDETECTED.has(m.status) && listed(equivalent, file, source, m)

export interface FileScore {
  file: string
  score: number
  detected: number
  undetected: number
  ignored: number
  // of the detected, those whose run crashed the test runner
  crashed: number
}

// Stryker's mutation score, of what is not listed as equivalent or invalid (compile errors).
export function scores(report: Report, equivalent: readonly Equivalent[] = []): FileScore[] {
  return Object.entries(report.files).map(([file, { source, mutants }]) => {
    const excused = mutants.filter((m) => isEquivalent(equivalent, file, source, m)).length
    const detected = mutants.filter((m) => DETECTED.has(m.status)).length
    const undetected = mutants.filter((m) => UNDETECTED.has(m.status)).length - excused
    const valid = detected + undetected
    const ignored = excused + mutants.filter((m) => m.status === 'Ignored').length
    const crashed = mutants.filter((m) => m.status === 'RuntimeError').length
    const score = valid === 0 ? 100 : (100 * detected) / valid
    return { file, score, detected, undetected, ignored, crashed }
  })
}

// Each mutant whose run crashed the test runner, with the first line of why.
export function crashes(report: Report): string[] {
  return Object.entries(report.files).flatMap(([file, { source, mutants }]) =>
    mutants
      .filter((m) => m.status === 'RuntimeError')
      .map((m) => `${where(file, source, m)} (${m.statusReason?.split('\n')[0] ?? ''})`),
  )
}

// A mutant as the gate names it: where, its status, what it changed, the code on its line.
const where = (file: string, source: string, m: Mutant) =>
  `${file}:${m.location.start.line}:${m.location.start.column} ${m.status} ${m.mutatorName} → ${m.replacement ?? ''} in: ${lineOf(source, m)}`

export function problems(report: Report, equivalent: readonly Equivalent[]): string[] {
  const found: string[] = []
  for (const s of scores(report, equivalent)) {
    if (s.score < MIN_SCORE) found.push(`${s.file}: ${s.score.toFixed(2)} % is under ${MIN_SCORE} %`)
  }
  for (const [file, { source, mutants }] of Object.entries(report.files)) {
    for (const m of mutants.filter((m) => UNDETECTED.has(m.status))) {
      if (!listed(equivalent, file, source, m)) found.push(where(file, source, m))
    }
    source.split('\n').forEach((text, i) => {
      if (text.includes('Stryker disable'))
        found.push(`${file}:${i + 1}: a Stryker comment; equivalent mutants are listed in stryker.config.mjs`)
    })
  }
  // an entry of a file this run mutated that matches none of its mutants is out of date
  for (const e of equivalent) {
    const entry = report.files[e.file]
    if (entry === undefined) continue
    for (const pair of e.mutants) {
      if (!entry.mutants.some((m) => isThis(e, pair, entry.source, m)))
        found.push(`stryker.config.mjs: no ${pair[0]} → ${pair[1]} in ${e.file} on: ${e.code}`)
    }
  }
  return found
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const report = JSON.parse(
    readFileSync(process.argv[2] ?? 'reports/mutation/mutation.json', 'utf8'),
  ) as Report
  const config: string = new URL('../stryker.config.mjs', import.meta.url).href
  const { equivalent } = (await import(config)) as { equivalent: Equivalent[] }
  for (const s of scores(report, equivalent)) {
    console.log(
      `${s.score.toFixed(2).padStart(6)} %  ${s.file} (${s.detected} killed, ${s.crashed} of them by a crash, ${s.undetected} not, ${s.ignored} equivalent)`,
    )
  }
  for (const c of crashes(report)) console.log(`crashed the test runner, counted as detected: ${c}`)
  const found = problems(report, equivalent)
  for (const p of found) console.error(`mutation target missed: ${p}`)
  process.exit(found.length > 0 ? 1 : 0)
}
