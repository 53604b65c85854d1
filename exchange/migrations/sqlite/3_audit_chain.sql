-- The tamper-evident trail (exchange::audit::chain). Each record links to
-- the one before it in its system's chain: hash = SHA-256(prev_hash ||
-- SHA-256(JCS of the record's content)), both as lowercase hex. Rows
-- written before this migration keep NULL in both: the chain begins at a
-- system's first row written after it.
ALTER TABLE audit_trail ADD COLUMN prev_hash TEXT;
ALTER TABLE audit_trail ADD COLUMN hash TEXT;
-- One row per chain: its last link. Every transaction that appends to a
-- chain takes this row first (an upsert: SQLite's write lock, PostgreSQL's
-- row lock) and updates it last, so appends to one chain never interleave.
CREATE TABLE IF NOT EXISTS audit_chain_head (
    system TEXT PRIMARY KEY,
    hash TEXT NOT NULL,
    seq INTEGER NOT NULL);
-- Signed checkpoints of a chain's head (exchange::audit::checkpoint):
-- `signature` is a detached JWS (`protected..signature`) over the JCS form
-- of {system, seq, hash, at}. Append-only, like the trail.
CREATE TABLE IF NOT EXISTS audit_checkpoints (
    system TEXT NOT NULL,
    seq INTEGER NOT NULL,
    hash TEXT NOT NULL,
    at TEXT NOT NULL,
    kid TEXT NOT NULL,
    signature TEXT NOT NULL,
    PRIMARY KEY (system, seq));
CREATE TRIGGER IF NOT EXISTS audit_checkpoints_no_update BEFORE UPDATE ON audit_checkpoints
    BEGIN SELECT RAISE(ABORT, 'audit checkpoints are append-only'); END;
CREATE TRIGGER IF NOT EXISTS audit_checkpoints_no_delete BEFORE DELETE ON audit_checkpoints
    BEGIN SELECT RAISE(ABORT, 'audit checkpoints are append-only'); END;
