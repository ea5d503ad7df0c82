// Query pieces shared by the operators' listings: a page's limit, the cursor, a name filter, a window.
import { z } from 'zod'
import { Timestamp } from './timestamp.js'

export const MAX_PAGE = 500

export const FilterName = z.string().min(1).max(256)
export const PageLimit = (fallback: number) => z.coerce.number().int().min(1).max(MAX_PAGE).default(fallback)
export const PageCursor = z.string().min(1).max(2048).describe('nextCursor of the previous page, as received')

export const CreatedWindow = {
  since: Timestamp.optional().describe('createdAt at or after this instant (inclusive)'),
  until: Timestamp.optional().describe('createdAt before this instant (exclusive)'),
}
