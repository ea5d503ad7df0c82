// Which failures mean the database could not be reached (the request may be repeated as it was), and
// which of those say a connection was refused or lost (they open the circuit, db/circuit.ts).

// A statement the circuit failed without sending it: the database was found unreachable and no probe
// has reached it since.
export class CircuitOpenError extends Error {
  override name = 'CircuitOpenError'
  readonly code = 'CIRCUIT_OPEN'
  constructor() {
    super('the database is unreachable (circuit open): not sent')
  }
}

// The `code` of an error and of what it wraps: `cause` (drizzle), `errors` (a connect to several addresses).
export function errorCodes(err: unknown): string[] {
  const codes: string[] = []
  const queue: [unknown, number][] = [[err, 0]]
  for (let next = queue.shift(); next; next = queue.shift()) {
    const [e, depth] = next
    if (!e || typeof e !== 'object' || depth > 4) continue
    const { code, cause, errors } = e as { code?: unknown; cause?: unknown; errors?: unknown }
    if (typeof code === 'string') codes.push(code)
    queue.push([cause, depth + 1])
    if (Array.isArray(errors)) for (const inner of errors) queue.push([inner, depth + 1])
  }
  return codes
}

// A connection refused, lost or never opened: Node's socket codes and postgres.js's own.
const LOST_SOCKET_CODES = [
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
  'CONNECTION_CLOSED',
  'CONNECT_TIMEOUT',
]
// The pool was ended by this process (postgres.js), or the circuit failed the statement.
const OWN_CODES = ['CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CIRCUIT_OPEN']
export const SOCKET_CODES = new Set([...LOST_SOCKET_CODES, ...OWN_CODES])
const LOST_SOCKET = new Set(LOST_SOCKET_CODES)

// The server ended the connection or would not take one: shutting down, crashed, starting up (57P01–3).
const GONE_STATES = new Set(['57P01', '57P02', '57P03'])
// 53300: the server has no connection left to give. The database is there, and the pool's open
// connections still work: it answers 503, and does not open the circuit.
const FULL_STATE = '53300'
// SQLSTATE class 08: connection exception.
const CONNECTION_EXCEPTION = /^08[0-9A-Z]{3}$/

// The database went away or is not there yet: the socket failed, the connection failed, the server is
// shutting down or starting up, has no connection left to give, or the circuit is open.
export function isUnavailable(err: unknown): boolean {
  return errorCodes(err).some(
    (code) =>
      SOCKET_CODES.has(code) ||
      GONE_STATES.has(code) ||
      code === FULL_STATE ||
      CONNECTION_EXCEPTION.test(code),
  )
}

// A connection could not be opened or was lost: what opens the circuit. Not the pool's own end, not a
// full server, not a statement the database refused.
export function lostConnection(err: unknown): boolean {
  return errorCodes(err).some(
    (code) => LOST_SOCKET.has(code) || GONE_STATES.has(code) || CONNECTION_EXCEPTION.test(code),
  )
}
