-- GET /v1/reports?reason=…[&kind=…] walks the matching results newest first, in the order of the
-- pages (created_at DESC, report_id DESC), and stops when a page is full. Only results with a
-- reason are ever looked up this way (a reason filter names a code), so both indexes are partial:
-- they hold the few unmet/error results, not every met one, which keeps each report's write cheap.
-- A kind filter alone needs no index of its own: nearly every report has a result of each kind, so
-- walking the reports newest first finds a page at once (requirement_results_pkey per report).
-- Built in the migration's transaction: writes to requirement_results wait while they build.
DROP INDEX requirement_results_kind_reason;
DROP INDEX requirement_results_reason;
CREATE INDEX requirement_results_reason ON requirement_results (reason, created_at DESC, report_id DESC)
  WHERE reason IS NOT NULL;
CREATE INDEX requirement_results_kind_reason ON requirement_results (kind, reason, created_at DESC, report_id DESC)
  WHERE reason IS NOT NULL;
