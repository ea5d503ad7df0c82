-- Alerts: `requirement.undeclared`, a dispatch whose agent failed after using a program that no requirement
-- declares and that was not there (its completion's reason `undeclared-requirement`, set by a worker that
-- observes: docs/attribution.md). Written by a trigger in the same transaction as the completion, as the
-- other alerts are; it fires only for such a completion, and writes only when a webhook wants it.
CREATE FUNCTION preflight_alert_requirement_undeclared() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO webhook_deliveries (webhook_id, event, payload)
  SELECT w.id, 'requirement.undeclared', jsonb_strip_nulls(jsonb_build_object(
    'dispatchId', NEW.id,
    'subagent', jsonb_build_object('name', NEW.subagent_name, 'version', NEW.subagent_version),
    'attempt', NEW.attempt,
    'exitCode', NEW.completion -> 'exitCode',
    'undeclared', (SELECT jsonb_agg(need) FROM jsonb_array_elements(NEW.completion -> 'undeclared') AS need
                   WHERE need ->> 'state' = 'missing'),
    'source', NEW.completion #>> '{observed,source}',
    'at', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')))
  FROM webhooks w WHERE 'requirement.undeclared' = ANY (w.events);
  IF FOUND THEN PERFORM pg_notify('preflight_webhooks', ''); END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER dispatches_undeclared AFTER UPDATE OF status ON dispatches FOR EACH ROW
  WHEN (NEW.status = 'failed' AND OLD.status IS DISTINCT FROM NEW.status
        AND NEW.completion ->> 'reason' = 'undeclared-requirement')
  EXECUTE FUNCTION preflight_alert_requirement_undeclared();
