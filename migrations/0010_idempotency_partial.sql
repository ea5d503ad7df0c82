-- The idempotency key is unique where it is set. The UNIQUE constraint indexed every dispatch, the
-- keyless ones too: an entry for a NULL key that no lookup reads, added again by every version of the
-- row (a dispatch row is updated three times in a cycle, and each of those updates changes an indexed
-- column, so each writes an entry in every index). The partial index holds the keys alone.
CREATE UNIQUE INDEX dispatches_idempotency ON dispatches (idempotency_key) WHERE idempotency_key IS NOT NULL;
ALTER TABLE dispatches DROP CONSTRAINT dispatches_idempotency_key_key;
