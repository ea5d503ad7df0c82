-- GET /v1/reports?kind=…&reason=… walks the matching results newest first, in the order of the pages
-- (created_at DESC, report_id DESC), and stops when a page is full: a frequent value stops after a
-- page, a rare one (a kind few subagents declare, a reason code) reads only its few results.
-- requirement_results_kind serves a kind alone; the reason indexes are partial, because a reason
-- filter always names a code and only unmet/error results have one (a few percent of the rows).
-- Built in the migration's transaction: writes to requirement_results wait while they build.
DROP INDEX requirement_results_kind_reason;
DROP INDEX requirement_results_reason;
CREATE INDEX requirement_results_kind ON requirement_results (kind, created_at DESC, report_id DESC);
CREATE INDEX requirement_results_reason ON requirement_results (reason, created_at DESC, report_id DESC)
  WHERE reason IS NOT NULL;
CREATE INDEX requirement_results_kind_reason ON requirement_results (kind, reason, created_at DESC, report_id DESC)
  WHERE reason IS NOT NULL;
