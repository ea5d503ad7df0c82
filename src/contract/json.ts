// A JSON object of free shape whose nesting is bounded, so no later recursion over it can overflow the stack.
import { z } from 'zod'

export const MAX_JSON_DEPTH = 32

// Depth of nested arrays/objects, measured without recursion (the input may be arbitrarily deep).
export function jsonDepth(value: unknown): number {
  let max = 0
  const stack: [unknown, number][] = [[value, 0]]
  while (stack.length > 0) {
    const [v, depth] = stack.pop() as [unknown, number]
    if (v === null || typeof v !== 'object') continue
    if (depth + 1 > max) max = depth + 1
    if (max > MAX_JSON_DEPTH) return max
    for (const child of Object.values(v)) stack.push([child, depth + 1])
  }
  return max
}

export const FreeJsonObject = z
  .record(z.string(), z.unknown())
  .refine((v) => jsonDepth(v) <= MAX_JSON_DEPTH, `nested deeper than ${MAX_JSON_DEPTH} levels`)
