// Fails `npm run test:mutation` when a target of docs/mutation.md is missed: a file under 90 %, a mutant that
// survived or that no test reached, or a `Stryker disable` whose reason docs/mutation.md does not list.
import { readFileSync } from 'node:fs'

export const MIN_SCORE = 90

interface Mutant {
  status: string
  mutatorName: string
  replacement?: string
  location: { start: { line: number; column: number } }
}

export interface Report {
  files: Record<string, { source: string; mutants: Mutant[] }>
}

const DETECTED = new Set(['Killed', 'Timeout'])
const UNDETECTED = new Set(['Survived', 'NoCoverage'])

export interface FileScore {
  file: string
  score: number
  detected: number
  undetected: number
  ignored: number
}

// Stryker's mutation score, of what is not documented as equivalent (ignored) or invalid (compile errors).
export function scores(report: Report): FileScore[] {
  return Object.entries(report.files).map(([file, { mutants }]) => {
    const detected = mutants.filter((m) => DETECTED.has(m.status)).length
    const undetected = mutants.filter((m) => UNDETECTED.has(m.status)).length
    const ignored = mutants.filter((m) => m.status === 'Ignored').length
    const valid = detected + undetected
    return { file, score: valid === 0 ? 100 : (100 * detected) / valid, detected, undetected, ignored }
  })
}

// Every reason given after `Stryker disable …:` in a mutated file, with where it is.
export function disableReasons(report: Report): { file: string; line: number; reason: string }[] {
  return Object.entries(report.files).flatMap(([file, { source }]) =>
    source.split('\n').flatMap((text, i) => {
      const match = /\/\/ Stryker disable[^:]*:\s*(.+)$/.exec(text)
      return match?.[1] ? [{ file, line: i + 1, reason: match[1].trim() }] : []
    }),
  )
}

export function problems(report: Report, docs: string): string[] {
  const found: string[] = []
  for (const s of scores(report)) {
    if (s.score < MIN_SCORE) found.push(`${s.file}: ${s.score.toFixed(2)} % is under ${MIN_SCORE} %`)
  }
  for (const [file, { source, mutants }] of Object.entries(report.files)) {
    const lines = source.split('\n')
    for (const m of mutants.filter((m) => UNDETECTED.has(m.status))) {
      const { line, column } = m.location.start
      const code = lines[line - 1]?.trim() ?? ''
      found.push(
        `${file}:${line}:${column} ${m.status} ${m.mutatorName} → ${m.replacement ?? ''} in: ${code}`,
      )
    }
  }
  for (const d of disableReasons(report)) {
    if (!docs.includes(d.reason))
      found.push(`${d.file}:${d.line}: the reason "${d.reason}" is not in docs/mutation.md`)
  }
  return found
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const report = JSON.parse(
    readFileSync(process.argv[2] ?? 'reports/mutation/mutation.json', 'utf8'),
  ) as Report
  const docs = readFileSync(new URL('../docs/mutation.md', import.meta.url), 'utf8')
  for (const s of scores(report)) {
    console.log(
      `${s.score.toFixed(2).padStart(6)} %  ${s.file} (${s.detected} killed, ${s.undetected} not, ${s.ignored} equivalent)`,
    )
  }
  const found = problems(report, docs)
  for (const p of found) console.error(`mutation target missed: ${p}`)
  process.exit(found.length > 0 ? 1 : 0)
}
