// `preflight reports` — lists preflight reports from a coordinator over GET /v1/reports, following
// nextCursor through every page (or until --limit reports), as text blocks or a JSON array.
import { MAX_PAGE, type ReportItem, type ReportPage, ReportsQuery } from '../contract/index.js'
import { type Api, call } from './api.js'
import { coordinatorUrl, intFlag, tokenFrom } from './args.js'
import { UsageError } from './errors.js'
import type { REPORTS_FLAGS, Values } from './flags.js'
import { stdoutColours } from './paint.js'
import { formatReports } from './reports-format.js'

const FILTERS = ['outcome', 'subagent', 'worker', 'kind', 'reason', 'since', 'until'] as const

interface Request extends Api {
  filters: Record<string, string>
  limit: number | undefined
  format: 'text' | 'json'
}

export async function run(values: Values<typeof REPORTS_FLAGS>): Promise<number> {
  const request = parseRequest(values)
  const items = await fetchAll(request)
  process.stdout.write(
    request.format === 'json' ? `${JSON.stringify(items, null, 2)}\n` : formatReports(items, stdoutColours()),
  )
  return 0
}

function parseRequest(values: Values<typeof REPORTS_FLAGS>): Request {
  const format = values.format ?? 'text'
  if (format !== 'text' && format !== 'json')
    throw new UsageError(`--format must be text or json, got "${format}"`)
  const filters: Record<string, string> = {}
  for (const name of FILTERS) if (values[name] !== undefined) filters[name] = values[name]
  checkFilters(filters)
  return {
    base: coordinatorUrl(values.coordinator),
    token: tokenFrom(values.token, 'an operator'),
    filters,
    limit: intFlag(values.limit, 'limit', 1, 10_000_000),
    format,
  }
}

// The same schema the coordinator validates with, so a bad filter fails here with the flag's name.
function checkFilters(filters: Record<string, string>): void {
  const parsed = ReportsQuery.safeParse(filters)
  if (parsed.success) return
  const issue = parsed.error.issues[0]
  const flag = String(issue?.path[0] ?? 'filter')
  throw new UsageError(`--${flag} "${filters[flag] ?? ''}" is not valid: ${issue?.message ?? 'invalid'}`)
}

async function fetchAll(req: Request): Promise<ReportItem[]> {
  const items: ReportItem[] = []
  let cursor: string | null = null
  do {
    const want = req.limit === undefined ? MAX_PAGE : Math.min(MAX_PAGE, req.limit - items.length)
    const page = await fetchPage(req, want, cursor)
    items.push(...page.items)
    cursor = page.nextCursor
  } while (cursor !== null && (req.limit === undefined || items.length < req.limit))
  return items
}

function fetchPage(req: Request, limit: number, cursor: string | null): Promise<ReportPage> {
  const query = new URLSearchParams({ ...req.filters, limit: String(limit) })
  if (cursor !== null) query.set('cursor', cursor)
  return call<ReportPage>(req, 'GET', 'v1/reports', query)
}
