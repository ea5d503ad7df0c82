// The API's roles, without zod (api.ts makes its schema of them): `npm start` and the coordinator's
// bootstrap tokens read them before anything heavier is loaded. (The type is the contract's `Role`: a
// type-only import of it loads nothing.)
export const ROLES = ['orchestrator', 'worker', 'operator', 'admin'] as const

export const isRole = (value: string): value is (typeof ROLES)[number] =>
  (ROLES as readonly string[]).includes(value)
