// `preflight reports` — not built yet.
export async function run(_args: string[]): Promise<number> {
  throw new Error('preflight reports is not implemented yet')
}
