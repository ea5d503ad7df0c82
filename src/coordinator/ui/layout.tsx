// The operator page's frame: one header with the sections and sign-out, one main landmark.
import type { Child } from 'hono/jsx'
import { FAILURE_STATUSES, type Role, TROUBLESHOOTING } from '../../contract/index.js'

export type Section = 'failures' | 'drift'

// How often a page that refreshes itself does (the user turns it on and off: Refresh).
export const REFRESH_SECONDS = 30

export interface PageProps {
  title: string
  section?: Section | undefined
  signedIn?: boolean
  // the session's role: the sections it may open (drift is the reports', an operator's)
  role?: Role | undefined
  // reload the page every REFRESH_SECONDS
  refresh?: boolean | undefined
  children?: Child
}

export function Page({ title, section, signedIn = true, role, refresh = false, children }: PageProps) {
  const link = (to: Section, text: string) => (
    <a href={`/ui/${to}`} aria-current={section === to ? 'page' : undefined}>
      {text}
    </a>
  )
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        {refresh && <meta http-equiv="refresh" content={String(REFRESH_SECONDS)} />}
        <title>{`${title} · preflight`}</title>
        <link rel="stylesheet" href="/ui/style.css" />
      </head>
      <body>
        <header>
          <span class="name">preflight</span>
          {signedIn && (
            <nav aria-label="Sections">
              <ul>
                <li>{link('failures', 'Failures')}</li>
                {role !== 'orchestrator' && <li>{link('drift', 'Drift')}</li>}
              </ul>
            </nav>
          )}
          {signedIn && (
            <form method="post" action="/ui/sign-out">
              <button type="submit">Sign out</button>
            </form>
          )}
        </header>
        <main id="main">
          <h1>{title}</h1>
          {children}
        </main>
      </body>
    </html>
  )
}

// A status as a word with a class (never colour alone): bad, ok or in between.
export function Status({ status }: { status: string }) {
  const tone = status === 'succeeded' || status === 'met' ? 'ok' : BAD.has(status) ? 'bad' : 'warn'
  return <span class={`status ${tone}`}>{status}</span>
}

const BAD = new Set<string>([...FAILURE_STATUSES, 'unmet', 'error'])

// A reason code, with what it means on hover: the entry `preflight explain CODE` prints.
export function Code({ code }: { code: string }) {
  const entry = TROUBLESHOOTING[code]
  return entry ? <abbr title={entry.means}>{code}</abbr> : code
}

// A reason code with what it means and what to look at, written out (the page of one dispatch).
export function Reason({ code }: { code: string }) {
  const entry = TROUBLESHOOTING[code]
  return (
    <div class="reason">
      <p>
        Reason: <code>{code}</code>
        {entry && ` — ${entry.means}`}
      </p>
      {entry?.lookAt && <p class="note">Look at: {entry.lookAt}</p>}
    </div>
  )
}

// What a refused request is told: the API's stable code for it (a form's own message has none) and
// words for a person.
export interface Problem {
  code?: string
  message: string
}

export function ErrorBox({ problem }: { problem: Problem }) {
  return (
    <p class="error-box" role="alert">
      {problem.code && (
        <>
          <code>{problem.code}</code>{' '}
        </>
      )}
      {problem.message}
    </p>
  )
}

// The page's refresh: once now, and every REFRESH_SECONDS until turned off — links, no script: the
// choice is the address's `refresh=on`. `path` and `query`: the page's address without it.
export function Refresh({
  path,
  query = {},
  on,
}: {
  path: string
  query?: Record<string, string>
  on: boolean
}) {
  const to = (refresh: boolean) => {
    const params = new URLSearchParams(Object.entries(query).filter(([, v]) => v !== ''))
    if (refresh) params.set('refresh', 'on')
    const text = params.toString()
    return text ? `${path}?${text}` : path
  }
  return (
    <p class="refresh">
      <a href={to(on)}>Refresh now</a>
      {on ? (
        <>
          {' '}
          · refreshing every {REFRESH_SECONDS} s · <a href={to(false)}>Stop refreshing</a>
        </>
      ) : (
        <>
          {' '}
          · <a href={to(true)}>Refresh every {REFRESH_SECONDS} s</a>
        </>
      )}
    </p>
  )
}

// A length of time for people: 840 ms, 3.2 s, 4 min 5 s, 2 h 3 min.
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`
  const s = Math.round(ms / 1000)
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`
}
