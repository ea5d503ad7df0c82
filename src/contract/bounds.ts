// Bounds every side holds alike: the coordinator's schemas and listing, and the worker that stays
// within them. Without zod, so that anything may import them.

// A completion's `detail` (the output tail of setup, the agent or the stopped program), in characters.
export const MAX_DETAIL_CHARS = 65_536

// A fault's message (the `fault` event, the listing's last fault), in characters: the end of it is kept.
export const FAULT_TEXT_CHARS = 2_000
