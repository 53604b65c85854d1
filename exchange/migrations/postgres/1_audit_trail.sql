-- The audit trail every system keeps (exchange::audit). Append-only: a
-- trigger refuses UPDATE, DELETE and TRUNCATE.
CREATE TABLE audit_trail (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    system TEXT NOT NULL, role TEXT NOT NULL, at TEXT NOT NULL,
    caller TEXT NOT NULL, provider TEXT NOT NULL, capability TEXT NOT NULL,
    request_id TEXT NOT NULL, trace_id TEXT NOT NULL,
    outcome TEXT NOT NULL, reason TEXT, duration_ms BIGINT NOT NULL,
    detail TEXT NOT NULL);
CREATE INDEX audit_trail_trace ON audit_trail (trace_id);
CREATE FUNCTION audit_trail_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit trail is append-only';
END
$$;
CREATE TRIGGER audit_trail_no_change BEFORE UPDATE OR DELETE ON audit_trail
    FOR EACH ROW EXECUTE FUNCTION audit_trail_append_only();
CREATE TRIGGER audit_trail_no_truncate BEFORE TRUNCATE ON audit_trail
    FOR EACH STATEMENT EXECUTE FUNCTION audit_trail_append_only();
