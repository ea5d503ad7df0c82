-- A report's results are kept once: in the report (`report -> 'results'` as sent, or `judged` where the
-- coordinator's verdict added results for missing or extra ones). requirement_results keeps only the
-- results that are not met — the ones with a reason, which the reason filters, the drift, the listing
-- and the drift alert read. A met result as a row cost every report 8 heap rows, 24 index entries and
-- 8 foreign-key locks (about half of its WAL) for readers that now read the report instead: a
-- report's own results, the summary of a window (the reports in it, their results expanded), and the
-- kind filter (`kinds`: the kinds of the report's results, walked by an index per kind). The summary
-- without a window is requirement_rollups, counted from the report's results as before.
-- Every report row is rewritten once here, and the met rows deleted: on a database with many reports,
-- this takes as long as migration 0013 did (docs/operations.md).
SET LOCAL statement_timeout = 0;

ALTER TABLE preflight_reports ADD COLUMN judged jsonb, ADD COLUMN kinds text[] NOT NULL DEFAULT '{}';

UPDATE preflight_reports p SET
  judged = CASE WHEN p.reason IS NOT NULL THEN (
    SELECT coalesce(jsonb_agg(jsonb_build_object('kind', r.kind, 'requirement', r.requirement, 'status', r.status,
                                                 'observed', r.observed, 'durationMs', r.duration_ms)
                              || CASE WHEN r.reason IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('reason', r.reason) END
                              ORDER BY r.position), '[]'::jsonb)
    FROM requirement_results r WHERE r.report_id = p.id) END,
  kinds = ARRAY(SELECT DISTINCT r.kind FROM requirement_results r WHERE r.report_id = p.id ORDER BY 1);

DELETE FROM requirement_results WHERE status = 'met';

-- the kind filter walks the reports now (one entry per kind a report has)
DROP INDEX requirement_results_kind;
CREATE INDEX preflight_reports_kind_paths ON preflight_reports (created_at DESC, id DESC) WHERE kinds @> '{paths}';
CREATE INDEX preflight_reports_kind_exec ON preflight_reports (created_at DESC, id DESC) WHERE kinds @> '{exec}';
CREATE INDEX preflight_reports_kind_git ON preflight_reports (created_at DESC, id DESC) WHERE kinds @> '{git}';

-- Drift alert: this result is not met, and the last one before it for the same subagent and requirement
-- was met — the last met result (requirement_rollups, counted in the statement that inserts this row)
-- is at or before this one, and no other report's unmet or error result lies between them.
CREATE OR REPLACE FUNCTION preflight_alert_requirement_drifted() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  last_met timestamptz;
  dispatch uuid;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM webhooks WHERE 'requirement.drifted' = ANY (events)) THEN RETURN NULL; END IF;
  SELECT o.last_met_at INTO last_met FROM requirement_rollups o
    WHERE o.subagent_name = NEW.subagent_name AND o.kind = NEW.kind AND o.requirement = NEW.requirement;
  IF last_met IS NULL OR last_met > NEW.created_at THEN RETURN NULL; END IF;
  IF EXISTS (SELECT 1 FROM requirement_results r
             WHERE r.subagent_name = NEW.subagent_name AND r.kind = NEW.kind AND r.requirement = NEW.requirement
               AND r.created_at >= last_met AND r.created_at <= NEW.created_at AND r.report_id <> NEW.report_id)
  THEN RETURN NULL; END IF;
  SELECT p.dispatch_id INTO dispatch FROM preflight_reports p WHERE p.id = NEW.report_id;
  INSERT INTO webhook_deliveries (webhook_id, event, payload)
  SELECT w.id, 'requirement.drifted', jsonb_strip_nulls(jsonb_build_object(
    'subagent', NEW.subagent_name,
    'kind', NEW.kind,
    'requirement', NEW.requirement,
    'status', NEW.status,
    'reason', NEW.reason,
    'dispatchId', dispatch,
    'lastMetAt', to_char(last_met AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'at', to_char(NEW.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')))
  FROM webhooks w WHERE 'requirement.drifted' = ANY (w.events);
  PERFORM pg_notify('preflight_webhooks', '');
  RETURN NULL;
END $$;
