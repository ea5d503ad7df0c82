// `preflight coordinator` — not built yet.
export async function run(_args: string[]): Promise<number> {
  throw new Error('preflight coordinator is not implemented yet')
}
