-- Orchestrators steer a dispatch: a deadline for the whole dispatch, and a cancel at any point before
-- the end.
--   deadline  set at creation (absolute, or now() + timeoutMs): a queued dispatch past it is never
--             claimed and the sweep ends it expired (reason 'deadline'); the worker stops its agent at it
--   cancel    who cancelled (token id, role), why and when: set by the statement that cancels. A claimed
--             or running dispatch keeps its attempt and lease token, so the worker holding it can still
--             write what it had (its completion) to the cancelled dispatch
ALTER TABLE dispatches
  ADD COLUMN deadline timestamptz,
  ADD COLUMN cancel   jsonb;

-- The sweep finds queued dispatches past their deadline without reading the queue.
CREATE INDEX dispatches_queued_deadline ON dispatches (deadline) WHERE status = 'queued' AND deadline IS NOT NULL;
