-- Sign-in sessions of the operator page (/ui). The browser holds only a random session id in an
-- HttpOnly cookie; this table holds its sha256 and the token it was opened with, so revoking or
-- deleting that token, or its expiry, ends the session at once.
CREATE TABLE ui_sessions (
  session_hash char(64)    PRIMARY KEY,
  token_hash   char(64)    NOT NULL REFERENCES api_tokens (token_hash) ON DELETE CASCADE,
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL
);
CREATE INDEX ui_sessions_expires_at ON ui_sessions (expires_at);
