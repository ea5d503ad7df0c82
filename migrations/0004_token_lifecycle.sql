-- Tokens that can be listed and revoked: an id to name one by (never the secret), when it was last
-- used (to the minute), an optional expiry, and the revocation as a date: a revoked token stays
-- revoked, also while it is still in PREFLIGHT_BOOTSTRAP_TOKENS. `bootstrap` marks the tokens seeded
-- from that list: at start the coordinator deletes those no longer in it.
ALTER TABLE api_tokens
  ADD COLUMN id           bigint GENERATED ALWAYS AS IDENTITY,
  ADD COLUMN bootstrap    boolean NOT NULL DEFAULT false,
  ADD COLUMN expires_at   timestamptz,
  ADD COLUMN last_used_at timestamptz,
  ADD COLUMN revoked_at   timestamptz;
ALTER TABLE api_tokens ADD CONSTRAINT api_tokens_id UNIQUE (id);
-- Until now the seeded tokens were told apart by their label alone.
UPDATE api_tokens SET bootstrap = true WHERE label = 'bootstrap';
