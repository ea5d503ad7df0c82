-- The summary's count of undeclared needs per subagent (GET /v1/reports/summary, `undeclared`) reads only
-- the dispatches whose completion has them (a worker that observes: docs/attribution.md), by subagent
-- and the time they ended.
CREATE INDEX dispatches_undeclared ON dispatches (subagent_name, ended_at) WHERE completion ? 'undeclared';
