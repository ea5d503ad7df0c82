-- Worker events are bounded per dispatch: a count per attempt and the bytes of their detail in all.
-- Both are kept on the dispatch row, so the check and the insert are one statement holding the
-- row's lock, and concurrent posts cannot overshoot. Events stored before this migration do not count.
ALTER TABLE dispatches
  ADD COLUMN attempt_events integer NOT NULL DEFAULT 0,  -- worker events of the current attempt (a claim resets it)
  ADD COLUMN event_bytes    bigint  NOT NULL DEFAULT 0;  -- bytes of the JSON detail of all its worker events
