-- The audit trail every system keeps (exchange::audit). Append-only: the
-- triggers refuse UPDATE and DELETE. `IF NOT EXISTS` throughout: a file
-- made before migrations already has these and is adopted as it is.
CREATE TABLE IF NOT EXISTS audit_trail (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    system TEXT NOT NULL, role TEXT NOT NULL, at TEXT NOT NULL,
    caller TEXT NOT NULL, provider TEXT NOT NULL, capability TEXT NOT NULL,
    request_id TEXT NOT NULL, trace_id TEXT NOT NULL,
    outcome TEXT NOT NULL, reason TEXT, duration_ms INTEGER NOT NULL,
    detail TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS audit_trail_trace ON audit_trail (trace_id);
CREATE TRIGGER IF NOT EXISTS audit_trail_no_update BEFORE UPDATE ON audit_trail
    BEGIN SELECT RAISE(ABORT, 'audit trail is append-only'); END;
CREATE TRIGGER IF NOT EXISTS audit_trail_no_delete BEFORE DELETE ON audit_trail
    BEGIN SELECT RAISE(ABORT, 'audit trail is append-only'); END;
