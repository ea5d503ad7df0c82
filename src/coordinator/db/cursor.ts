// Opaque keyset cursors: base64url of a JSON key, checked against the shape the query expects.
export class InvalidCursorError extends Error {
  override name = 'InvalidCursorError'
}

// A cursor's instant: created_at to the microsecond (a millisecond Date would skip or repeat rows), and
// a real one (February 30th matches the pattern; the database would refuse it less precisely).
const MICRO_ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/
export function isMicroInstant(v: unknown): v is string {
  if (typeof v !== 'string' || !MICRO_ISO.test(v)) return false
  const ms = Date.parse(v)
  return !Number.isNaN(ms) && new Date(ms).toISOString().slice(0, 23) === v.slice(0, 23)
}

export function encodeCursor(key: unknown): string {
  return Buffer.from(JSON.stringify(key), 'utf8').toString('base64url')
}

export function decodeCursor<K>(cursor: string, isKey: (value: unknown) => value is K): K {
  if (!/^[A-Za-z0-9_-]{1,1024}$/.test(cursor)) throw new InvalidCursorError('cursor is not base64url')
  let value: unknown
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
  } catch {
    throw new InvalidCursorError('cursor does not decode')
  }
  if (!isKey(value)) throw new InvalidCursorError('cursor is not one this endpoint issued')
  return value
}

// A keyset page from a query that fetched one row more than `limit`: that row only tells that another
// page follows, whose cursor is the key of this page's last row.
export function pageOf<T>(fetched: T[], limit: number, keyOf: (last: T) => unknown) {
  const items = fetched.slice(0, limit)
  const last = items.at(-1)
  const nextCursor = fetched.length > limit && last !== undefined ? encodeCursor(keyOf(last)) : null
  return { items, nextCursor }
}
