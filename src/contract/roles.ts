// The API's roles, without zod (api.ts makes its schema of them): `npm start` and the coordinator's
// bootstrap tokens read them before anything heavier is loaded.
export const ROLES = ['orchestrator', 'worker', 'operator', 'admin'] as const
export type RoleName = (typeof ROLES)[number]

export const isRole = (value: string): value is RoleName => (ROLES as readonly string[]).includes(value)
