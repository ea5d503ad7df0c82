-- preflight schema v1: subagent versions, dispatches and their events, preflight reports with one row per result, tokens.

CREATE TABLE subagent_versions (
  name        text        NOT NULL,
  version     integer     NOT NULL CHECK (version >= 1),
  hash        char(64)    NOT NULL,
  definition  jsonb       NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (name, version)
);
CREATE INDEX subagent_versions_hash ON subagent_versions (name, hash);

CREATE TABLE dispatches (
  id                uuid        PRIMARY KEY,
  subagent_name     text        NOT NULL,
  subagent_version  integer     NOT NULL,
  workspace         jsonb       NOT NULL,
  labels            jsonb,
  status            text        NOT NULL DEFAULT 'queued' CHECK (status IN
                      ('queued', 'claimed', 'setup_failed', 'preflight_failed', 'running',
                       'succeeded', 'failed', 'expired', 'cancelled')),
  attempt           integer     NOT NULL DEFAULT 0,
  max_attempts      integer     NOT NULL DEFAULT 3,
  idempotency_key   text        UNIQUE,
  lease_owner       text,
  lease_token       text,
  lease_expires_at  timestamptz,
  completion        jsonb,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (subagent_name, subagent_version) REFERENCES subagent_versions (name, version)
);
-- claim takes the oldest queued dispatch; the sweep finds leases that ran out
CREATE INDEX dispatches_queued ON dispatches (created_at, id) WHERE status = 'queued';
CREATE INDEX dispatches_leased ON dispatches (lease_expires_at) WHERE status IN ('claimed', 'running');

CREATE TABLE dispatch_events (
  id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  dispatch_id  uuid        NOT NULL REFERENCES dispatches (id) ON DELETE CASCADE,
  attempt      integer     NOT NULL,
  step         text        NOT NULL,
  detail       jsonb,
  at           timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX dispatch_events_dispatch ON dispatch_events (dispatch_id, id);

CREATE TABLE preflight_reports (
  id                bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  dispatch_id       uuid        NOT NULL REFERENCES dispatches (id) ON DELETE CASCADE,
  attempt           integer     NOT NULL,
  subagent_name     text        NOT NULL,
  subagent_version  integer     NOT NULL,
  worker_id         text        NOT NULL,
  outcome           text        NOT NULL CHECK (outcome IN ('met', 'unmet', 'error')),
  decision          text        NOT NULL CHECK (decision IN ('proceed', 'abort')),
  declared          boolean     NOT NULL,
  reason            text,      -- set by the coordinator: 'report-incomplete' when results do not match the definition
  report            jsonb       NOT NULL,  -- the report as received (results, worker, timestamps)
  created_at        timestamptz NOT NULL DEFAULT now(),
  UNIQUE (dispatch_id, attempt)
);
-- GET /v1/reports: newest first, keyset on (created_at, id), optionally per subagent / outcome / worker
CREATE INDEX preflight_reports_recent ON preflight_reports (created_at DESC, id DESC);
CREATE INDEX preflight_reports_subagent ON preflight_reports (subagent_name, outcome, created_at DESC, id DESC);
-- a subagent's reports of any outcome, newest first, without sorting all of them
CREATE INDEX preflight_reports_subagent_recent ON preflight_reports (subagent_name, created_at DESC, id DESC);
CREATE INDEX preflight_reports_outcome ON preflight_reports (outcome, created_at DESC, id DESC);
CREATE INDEX preflight_reports_worker ON preflight_reports (worker_id, created_at DESC, id DESC);

-- one row per requirement result, denormalised (subagent, created_at) for the operators' queries
CREATE TABLE requirement_results (
  report_id      bigint      NOT NULL REFERENCES preflight_reports (id) ON DELETE CASCADE,
  position       integer     NOT NULL,
  subagent_name  text        NOT NULL,
  kind           text        NOT NULL,
  requirement    text        NOT NULL,
  status         text        NOT NULL CHECK (status IN ('met', 'unmet', 'error')),
  reason         text,
  observed       jsonb       NOT NULL,
  duration_ms    double precision NOT NULL,
  created_at     timestamptz NOT NULL,
  PRIMARY KEY (report_id, position)
);
-- summary per subagent × requirement, and report filters by kind / reason
-- INCLUDE (status): the summary's counts and drift read the index alone (index-only scan)
CREATE INDEX requirement_results_summary ON requirement_results (subagent_name, kind, requirement, created_at) INCLUDE (status);
CREATE INDEX requirement_results_kind_reason ON requirement_results (kind, reason, created_at DESC, report_id);
CREATE INDEX requirement_results_reason ON requirement_results (reason, created_at DESC, report_id) WHERE reason IS NOT NULL;

CREATE TABLE api_tokens (
  token_hash  char(64)    PRIMARY KEY,  -- sha256 hex of the token; the token itself is never stored
  role        text        NOT NULL CHECK (role IN ('orchestrator', 'worker', 'operator', 'admin')),
  label       text,
  created_at  timestamptz NOT NULL DEFAULT now()
);
