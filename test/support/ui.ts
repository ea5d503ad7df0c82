// Requests to the operator page in-process, as a browser sends them: a session cookie, a form posted
// with the page's own Origin (or another, to see it refused).
import { expect } from 'vitest'
import { type TestApp, tokens } from './app.js'

export const ORIGIN = 'http://localhost'

export interface PageReply {
  status: number
  headers: Headers
  text: string
}

export async function send(
  app: TestApp,
  path: string,
  init: { method?: string; cookie?: string; form?: Record<string, string>; origin?: string } = {},
): Promise<PageReply> {
  const headers: Record<string, string> = {}
  if (init.cookie) headers.cookie = init.cookie
  let body: string | undefined
  if (init.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded'
    headers.origin = init.origin ?? ORIGIN
    body = new URLSearchParams(init.form).toString()
  }
  const res = await app.app.request(`${ORIGIN}${path}`, {
    method: init.method ?? (init.form ? 'POST' : 'GET'),
    headers,
    body,
  })
  return { status: res.status, headers: res.headers, text: await res.text() }
}

// Signs in with the token; answers the session cookie as a Cookie header value.
export async function signIn(app: TestApp, token = tokens.operator): Promise<string> {
  const res = await send(app, '/ui/sign-in', { form: { token, next: '/ui/failures' } })
  expect(res.status).toBe(303)
  const cookie = res.headers.get('set-cookie') ?? ''
  return cookie.split(';')[0] as string
}
