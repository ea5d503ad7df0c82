// `preflight check` — not built yet.
export async function run(_args: string[]): Promise<number> {
  throw new Error('preflight check is not implemented yet')
}
