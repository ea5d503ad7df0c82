// `preflight token` — not built yet.
export async function run(_args: string[]): Promise<number> {
  throw new Error('preflight token is not implemented yet')
}
