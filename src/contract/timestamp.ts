// An instant on the wire: ISO 8601 with an offset (every createdAt, expiresAt, since, startedAt …).
import { z } from 'zod'

export const Timestamp = z.iso.datetime({ offset: true })
