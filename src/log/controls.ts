// Characters that drive a terminal, made inert before a log line is written: as visible escapes in the
// pretty form, as JSON's own \u escapes in the JSON form. Output records carry what setup and agents
// print, and a terminal (or `tail -f`, `docker logs`) obeys whatever reaches it raw.

// C0 but tab, DEL, C1 (0x9b is CSI to a terminal that reads 8-bit controls), and the bidi embeddings,
// overrides and isolates that reorder what is shown (Trojan Source). Tab is kept: it only moves the
// cursor forward, and output with tabs (tables, Makefiles) reads as it was printed.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching exactly those characters
const TERMINAL_CONTROLS = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g
// What JSON.stringify (and pino) leave raw of those: C0 is always escaped in a JSON string.
const RAW_IN_JSON = /[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r' }

// `\x1b`, `\r`, `\u202e`: a control character as text a person can read and a terminal does not act on.
export function visible(text: string): string {
  return text.replace(TERMINAL_CONTROLS, (ch) => NAMED[ch] ?? escaped(ch, ch.charCodeAt(0) <= 0xff))
}

// Text of several lines (an output tail, a stack), each line made visible as above, joined by `joiner`.
export function visibleLines(text: string, joiner = '\n'): string {
  return text.split('\n').map(visible).join(joiner)
}

// A serialised JSON line with the controls JSON leaves raw written as \u escapes: the same value to
// any parser, nothing a terminal acts on. Outside strings a JSON line holds only ASCII punctuation.
export function jsonWithoutControls(line: string): string {
  return line.replace(RAW_IN_JSON, (ch) => escaped(ch, false))
}

function escaped(ch: string, short: boolean): string {
  const code = ch
    .charCodeAt(0)
    .toString(16)
    .padStart(short ? 2 : 4, '0')
  return short ? `\\x${code}` : `\\u${code}`
}
