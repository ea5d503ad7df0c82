-- Orchestrators steer the queue (docs/dispatches.md):
--   priority  claims take the highest first, then the oldest; a dispatch queued longer than the
--             coordinator's aging bound is taken before any newer one (dispatches_queued, oldest first)
--   metadata  the orchestrator's own references (a small string → string map), filterable in the listing
ALTER TABLE dispatches
  ADD COLUMN priority integer NOT NULL DEFAULT 0 CHECK (priority BETWEEN -100 AND 100),
  ADD COLUMN metadata jsonb;

-- The claim's walk when nothing has aged: highest priority first, then the oldest.
CREATE INDEX dispatches_queued_priority ON dispatches (priority DESC, created_at, id) WHERE status = 'queued';
-- GET /v1/dispatches?metadata.key=value: containment (@>) on the pairs asked for.
CREATE INDEX dispatches_metadata ON dispatches USING gin (metadata jsonb_path_ops) WHERE metadata IS NOT NULL;

-- A dispatch reaching its final status tells every coordinator at once (NOTIFY, sent at commit, the id
-- as payload): long-polls waiting for it to end and its event streams wake, whichever coordinator
-- wrote the end. One notification per dispatch, from every statement that ends one.
CREATE FUNCTION preflight_notify_ended() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('preflight_dispatch_ended', NEW.id::text);
  RETURN NULL;
END $$;
CREATE TRIGGER dispatches_ended_notify AFTER UPDATE OF ended_at ON dispatches FOR EACH ROW
  WHEN (OLD.ended_at IS NULL AND NEW.ended_at IS NOT NULL)
  EXECUTE FUNCTION preflight_notify_ended();
