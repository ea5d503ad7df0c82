// Fields of /proc/<pid>/stat (this process's by default), numbered as proc(5) numbers them (1: pid).
// The command (field 2) is in parentheses and may hold spaces and parentheses of its own: the fields
// after it are counted from its last ')'. Throws where there is no /proc.
import { readFileSync } from 'node:fs'

export function procStat(fields: readonly number[], pid: number | 'self' = 'self'): number[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const after = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return fields.map((field) => Number(after[field - 3]))
}
