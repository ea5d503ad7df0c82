// The operator page's frame: one header with the sections and sign-out, one main landmark.
import type { Child } from 'hono/jsx'
import { FAILURE_STATUSES, TROUBLESHOOTING } from '../../contract/index.js'

export type Section = 'failures' | 'drift'

export interface PageProps {
  title: string
  section?: Section | undefined
  signedIn?: boolean
  children?: Child
}

export function Page({ title, section, signedIn = true, children }: PageProps) {
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
                <li>{link('drift', 'Drift')}</li>
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
