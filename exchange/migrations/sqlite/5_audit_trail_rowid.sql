-- The trail numbered by SQLite's rowid alone (exchange::audit). With
-- `AUTOINCREMENT` every commit also rewrote `sqlite_sequence`, one more
-- page in the WAL per commit on the hot path; without it a new row takes
-- the largest seq + 1, which is the same number on a table nobody
-- deletes from (the triggers refuse it). A trail cut short by someone who
-- bypasses the triggers numbers its next rows from where the cut ends
-- either way: the chain and a checkpoint kept outside the store tell it
-- (exchange::audit::verify). Same columns, index and triggers as before.
CREATE TABLE audit_trail_rowid (
    seq INTEGER PRIMARY KEY,
    system TEXT NOT NULL, role TEXT NOT NULL, at TEXT NOT NULL,
    caller TEXT NOT NULL, provider TEXT NOT NULL, capability TEXT NOT NULL,
    request_id TEXT NOT NULL, trace_id TEXT NOT NULL,
    outcome TEXT NOT NULL, reason TEXT, duration_ms INTEGER NOT NULL,
    detail TEXT NOT NULL, prev_hash TEXT, hash TEXT);
INSERT INTO audit_trail_rowid (seq, system, role, at, caller, provider, capability,
        request_id, trace_id, outcome, reason, duration_ms, detail, prev_hash, hash)
    SELECT seq, system, role, at, caller, provider, capability,
        request_id, trace_id, outcome, reason, duration_ms, detail, prev_hash, hash
    FROM audit_trail ORDER BY seq;
-- DROP TABLE's implicit delete fires no trigger.
DROP TABLE audit_trail;
ALTER TABLE audit_trail_rowid RENAME TO audit_trail;
DELETE FROM sqlite_sequence WHERE name = 'audit_trail';
CREATE INDEX audit_trail_trace ON audit_trail (trace_id);
CREATE TRIGGER audit_trail_no_update BEFORE UPDATE ON audit_trail
    BEGIN SELECT RAISE(ABORT, 'audit trail is append-only'); END;
CREATE TRIGGER audit_trail_no_delete BEFORE DELETE ON audit_trail
    BEGIN SELECT RAISE(ABORT, 'audit trail is append-only'); END;
