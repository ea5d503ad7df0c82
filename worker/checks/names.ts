// Names as bytes (docs/requirements.md, "Names that are not UTF-8"): a name that is not valid UTF-8 is read
// as its ASCII bytes and a lone surrogate (U+DC00 + the byte) for each other byte, which no pattern can spell
// and only a wildcard matches; back to bytes for the file system, to U+FFFD in a report.
import { isUtf8 } from 'node:buffer'
import { realpathSync } from 'node:fs'

// A byte of a name that is not UTF-8, as the walk spells it: a low surrogate with no high one before it.
const BYTE = /((?<![\uD800-\uDBFF])[\uDC80-\uDCFF])/g

export function nameOf(bytes: Buffer): string {
  if (isUtf8(bytes)) return bytes.toString()
  return String.fromCharCode(...Array.from(bytes, (b) => (b < 0x80 ? b : 0xdc00 + b)))
}

// A path as the walk spells it from the path's bytes, name by name.
export function pathOf(bytes: Buffer): string {
  const names: string[] = []
  let at = 0
  for (let slash = bytes.indexOf(0x2f); slash !== -1; slash = bytes.indexOf(0x2f, at)) {
    names.push(nameOf(bytes.subarray(at, slash)))
    at = slash + 1
  }
  names.push(nameOf(bytes.subarray(at)))
  return names.join('/')
}

// A path as the walk spells it → what the file system is given: the string itself unless it holds a byte.
export function fsPath(path: string): string | Buffer {
  if (path.search(BYTE) === -1) return path
  // split at each byte, which the split keeps at the odd places
  const parts = path.split(BYTE)
  return Buffer.concat(parts.map((p, i) => (i % 2 ? Buffer.of(p.charCodeAt(0) - 0xdc00) : Buffer.from(p))))
}

// A real path, spelled as the walk spells names. A string realpath reads a name that is not UTF-8 as
// U+FFFD; only then is it asked again for bytes.
export function realPath(path: string): string {
  const real = realpathSync.native(fsPath(path))
  if (!real.includes('\uFFFD')) return real
  return pathOf(realpathSync.native(fsPath(path), { encoding: 'buffer' }))
}

// How a path is reported: each byte of a name that is not UTF-8 as U+FFFD (a report is valid Unicode).
export function shown(path: string): string {
  return path.replace(BYTE, '\uFFFD')
}
