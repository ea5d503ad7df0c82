-- Alerts: webhooks an admin registers, and a durable outbox of their deliveries. The rows of the
-- outbox are written by triggers in the same transaction as what they announce — a dispatch that
-- ends failed, setup_failed, preflight_failed or expired (`dispatch.failed`), a requirement result
-- that is not met right after one that was (`requirement.drifted`) — so an event is never lost to a
-- crash between the change and its alert, whichever statement made the change. Coordinators send
-- them (src/coordinator/alerts/), each row by one coordinator at a time (locked_until).
CREATE TABLE webhooks (
  id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  url         text        NOT NULL,
  events      text[]      NOT NULL,
  -- the HMAC key: kept as given, since every delivery is signed with it
  secret      text        NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE webhook_deliveries (
  id               bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  webhook_id       bigint      NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  event            text        NOT NULL,
  payload          jsonb       NOT NULL,
  attempts         integer     NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz NOT NULL DEFAULT now(),
  -- a coordinator sending it holds it until then
  locked_until     timestamptz,
  last_status      integer,
  last_error       text,
  delivered_at     timestamptz,
  failed_at        timestamptz,
  created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, id)
  WHERE delivered_at IS NULL AND failed_at IS NULL;
CREATE INDEX webhook_deliveries_log ON webhook_deliveries (webhook_id, id DESC);

CREATE FUNCTION preflight_alert_dispatch_failed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO webhook_deliveries (webhook_id, event, payload)
  SELECT w.id, 'dispatch.failed', jsonb_strip_nulls(jsonb_build_object(
    'dispatchId', NEW.id,
    'status', NEW.status,
    'subagent', jsonb_build_object('name', NEW.subagent_name, 'version', NEW.subagent_version),
    'attempt', NEW.attempt,
    'reason', NEW.completion ->> 'reason',
    'exitCode', NEW.completion -> 'exitCode',
    'at', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')))
  FROM webhooks w WHERE 'dispatch.failed' = ANY (w.events);
  IF FOUND THEN PERFORM pg_notify('preflight_webhooks', ''); END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER dispatches_failed AFTER UPDATE OF status ON dispatches FOR EACH ROW
  WHEN (NEW.status IN ('failed', 'setup_failed', 'preflight_failed', 'expired') AND OLD.status IS DISTINCT FROM NEW.status)
  EXECUTE FUNCTION preflight_alert_dispatch_failed();

-- Drift: this result is not met, and the one before it for the same subagent and requirement was.
CREATE FUNCTION preflight_alert_requirement_drifted() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  last_met timestamptz;
  dispatch uuid;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM webhooks WHERE 'requirement.drifted' = ANY (events)) THEN RETURN NULL; END IF;
  SELECT CASE WHEN r.status = 'met' THEN r.created_at END INTO last_met
    FROM requirement_results r
    WHERE r.subagent_name = NEW.subagent_name AND r.kind = NEW.kind AND r.requirement = NEW.requirement
      AND r.created_at <= NEW.created_at AND r.report_id <> NEW.report_id
    ORDER BY r.created_at DESC, r.report_id DESC LIMIT 1;
  IF last_met IS NULL THEN RETURN NULL; END IF;
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

CREATE TRIGGER requirement_results_drifted AFTER INSERT ON requirement_results FOR EACH ROW
  WHEN (NEW.status <> 'met')
  EXECUTE FUNCTION preflight_alert_requirement_drifted();
