-- GET /v1/reports/summary without a window reads one row per subagent × requirement instead of aggregating
-- every result ever stored (at 10M results its first page took 0.3–0.6 s). The row is kept in the
-- statement that stores a report (db/preflight.ts writeReport), so it always equals a recount of
-- requirement_results; the drift (first unmet after the last met) is read at query time from
-- requirement_results_summary, one index probe a row. Filled here from the results already stored: on a
-- database with many, this migration takes as long as one aggregate over all of them (docs/operations.md).
CREATE TABLE requirement_rollups (
  subagent_name text        NOT NULL,
  kind          text        NOT NULL,
  requirement   text        NOT NULL,
  checks        bigint      NOT NULL,
  met           bigint      NOT NULL,
  unmet         bigint      NOT NULL,
  error         bigint      NOT NULL,
  last_met_at   timestamptz,
  PRIMARY KEY (subagent_name, kind, requirement)
);

-- an aggregate over every stored result, however long it takes: this migration's transaction only
SET LOCAL statement_timeout = 0;

INSERT INTO requirement_rollups
SELECT subagent_name, kind, requirement, count(*), count(*) FILTER (WHERE status = 'met'),
       count(*) FILTER (WHERE status = 'unmet'), count(*) FILTER (WHERE status = 'error'),
       max(created_at) FILTER (WHERE status = 'met')
FROM requirement_results GROUP BY subagent_name, kind, requirement;
