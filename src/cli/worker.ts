// `preflight worker` — not built yet.
export async function run(_args: string[]): Promise<number> {
  throw new Error('preflight worker is not implemented yet')
}
