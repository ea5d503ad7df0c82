// `preflight migrate` — not built yet.
export async function run(_args: string[]): Promise<number> {
  throw new Error('preflight migrate is not implemented yet')
}
