-- GET /v1/reports?reason=…&worker=… (a kind too, or not) walks that worker's results with that reason
-- newest first, instead of merging every report of the worker with every result of the reason: with
-- no match, at 10M results, 51 ms and growing with history; now the worker's own few failures. Only a
-- result with a reason (unmet or error: a few percent of the rows) carries its report's worker, and
-- only those are in the index. Filled here for the results already stored (docs/reports.md).
SET LOCAL statement_timeout = 0;

ALTER TABLE requirement_results ADD COLUMN worker_id text;

UPDATE requirement_results r SET worker_id = p.worker_id
FROM preflight_reports p WHERE p.id = r.report_id AND r.reason IS NOT NULL;

CREATE INDEX requirement_results_worker_reason ON requirement_results (worker_id, reason, created_at DESC, report_id DESC)
  INCLUDE (kind) WHERE reason IS NOT NULL;
