-- GET /v1/dispatches lists every dispatch newest first, by status, subagent, worker and why it ended;
-- GET /v1/dispatches/endings follows dispatches as they end.
--   worker_id  the worker of the latest claim (lease_owner is cleared when the lease ends)
--   ended_at   when the dispatch reached its final status (set by the statement that set the status)
ALTER TABLE dispatches
  ADD COLUMN worker_id text,
  ADD COLUMN ended_at  timestamptz;

UPDATE dispatches d SET worker_id = c.worker_id
FROM (SELECT DISTINCT ON (dispatch_id) dispatch_id, detail ->> 'workerId' AS worker_id
      FROM dispatch_events WHERE step = 'claimed' ORDER BY dispatch_id, id DESC) c
WHERE c.dispatch_id = d.id;
UPDATE dispatches SET ended_at = updated_at
WHERE status IN ('setup_failed', 'preflight_failed', 'succeeded', 'failed', 'expired', 'cancelled');

-- Why a dispatch ended, one row per code: the setup reason of a setup_failed one, each reason of the
-- unmet/error results (and the report's own) of a preflight_failed one, 'fault' for an expired one a
-- worker posted a fault for. Written with the final status, so the dispatch's status, created_at,
-- subagent and worker are copied as they stay: a reason filter walks its own index in the listing's
-- order (newest first), with a subagent or worker filter too, and stops when the page is full, however
-- rare the code; a status filter reads the index's copy of the status (a reason comes with one status,
-- so a status that does not go with it costs a walk of that reason's entries, never of the dispatches).
CREATE TABLE dispatch_reasons (
  dispatch_id    uuid        NOT NULL REFERENCES dispatches (id) ON DELETE CASCADE,
  reason         text        NOT NULL,
  status         text        NOT NULL,
  created_at     timestamptz NOT NULL,
  subagent_name  text        NOT NULL,
  worker_id      text,
  PRIMARY KEY (dispatch_id, reason)
);

INSERT INTO dispatch_reasons (dispatch_id, reason, status, created_at, subagent_name, worker_id)
SELECT d.id, w.reason, d.status, d.created_at, d.subagent_name, d.worker_id
FROM dispatches d, LATERAL (
  SELECT d.completion ->> 'reason' WHERE d.status = 'setup_failed'
  UNION
  SELECT r.reason FROM preflight_reports p JOIN requirement_results r ON r.report_id = p.id
  WHERE d.status = 'preflight_failed' AND p.dispatch_id = d.id AND p.attempt = d.attempt AND r.status <> 'met'
  UNION
  SELECT p.reason FROM preflight_reports p
  WHERE d.status = 'preflight_failed' AND p.dispatch_id = d.id AND p.attempt = d.attempt
  UNION
  SELECT 'fault' WHERE d.status = 'expired'
    AND EXISTS (SELECT 1 FROM dispatch_events e WHERE e.dispatch_id = d.id AND e.step = 'fault')
) w (reason)
WHERE d.status IN ('setup_failed', 'preflight_failed', 'expired') AND w.reason IS NOT NULL;

-- Newest first, keyset on (created_at, id): one walk per status, merged (a listing without a status
-- filter merges all nine), so a rare status reads only its own rows. A subagent or worker filter walks
-- its own index the same way; both leave the other as a filter.
CREATE INDEX dispatches_status_recent ON dispatches (status, created_at DESC, id DESC);
CREATE INDEX dispatches_subagent_recent ON dispatches (subagent_name, status, created_at DESC, id DESC);
CREATE INDEX dispatches_worker_recent ON dispatches (worker_id, status, created_at DESC, id DESC)
  WHERE worker_id IS NOT NULL;
CREATE INDEX dispatch_reasons_recent ON dispatch_reasons (reason, created_at DESC, dispatch_id DESC)
  INCLUDE (status);
CREATE INDEX dispatch_reasons_subagent ON dispatch_reasons (reason, subagent_name, created_at DESC, dispatch_id DESC)
  INCLUDE (status);
CREATE INDEX dispatch_reasons_worker ON dispatch_reasons (reason, worker_id, created_at DESC, dispatch_id DESC)
  INCLUDE (status) WHERE worker_id IS NOT NULL;
-- The endings, oldest first from a cursor.
CREATE INDEX dispatches_ended ON dispatches (ended_at, id) WHERE ended_at IS NOT NULL;
