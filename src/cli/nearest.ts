// Nearest-match suggestions ("did you mean") for a word that names nothing known.

// The codes within a few edits of `code`, or holding it whole (`timeout` → `setup-timeout`), nearest first.
export function nearest(code: string, codes: readonly string[], max = 3): string[] {
  const bound = Math.max(2, Math.floor(code.length / 3))
  return codes
    .map((c) => ({ c, d: c !== code && (c.includes(code) || code.includes(c)) ? 1 : distance(code, c) }))
    .filter(({ d }) => d <= bound)
    .sort((a, b) => a.d - b.d || a.c.localeCompare(b.c))
    .slice(0, max)
    .map(({ c }) => c)
}

// Levenshtein distance: insertions, deletions and substitutions.
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      row.push(Math.min((previous[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost))
    }
    previous = row
  }
  return previous[b.length] ?? 0
}
