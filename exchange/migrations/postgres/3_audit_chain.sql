-- The tamper-evident trail (exchange::audit::chain). Each record links to
-- the one before it in its system's chain: hash = SHA-256(prev_hash ||
-- SHA-256(JCS of the record's content)), both as lowercase hex. Rows
-- written before this migration keep NULL in both: the chain begins at a
-- system's first row written after it.
ALTER TABLE audit_trail ADD COLUMN prev_hash TEXT, ADD COLUMN hash TEXT;
-- One row per chain: its last link. Every transaction that appends to a
-- chain takes this row first (an upsert: the row's lock, held to commit,
-- across replicas) and updates it last, so appends to one chain never
-- interleave and seq order is chain order.
CREATE TABLE audit_chain_head (
    system TEXT PRIMARY KEY,
    hash TEXT NOT NULL,
    seq BIGINT NOT NULL);
-- Signed checkpoints of a chain's head (exchange::audit::checkpoint):
-- `signature` is a detached JWS (`protected..signature`) over the JCS form
-- of {system, seq, hash, at}. Append-only, like the trail.
CREATE TABLE audit_checkpoints (
    system TEXT NOT NULL,
    seq BIGINT NOT NULL,
    hash TEXT NOT NULL,
    at TEXT NOT NULL,
    kid TEXT NOT NULL,
    signature TEXT NOT NULL,
    PRIMARY KEY (system, seq));
CREATE TRIGGER audit_checkpoints_no_change BEFORE UPDATE OR DELETE ON audit_checkpoints
    FOR EACH ROW EXECUTE FUNCTION audit_trail_append_only();
CREATE TRIGGER audit_checkpoints_no_truncate BEFORE TRUNCATE ON audit_checkpoints
    FOR EACH STATEMENT EXECUTE FUNCTION audit_trail_append_only();
