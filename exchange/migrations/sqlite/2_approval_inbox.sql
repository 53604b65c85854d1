-- The approval inbox every receiver keeps (exchange::inbox): proposals,
-- their decisions, and the local write an approval performed.
CREATE TABLE IF NOT EXISTS approval_inbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    received_at TEXT NOT NULL, trace_id TEXT NOT NULL, request_id TEXT NOT NULL,
    position INTEGER NOT NULL, from_system TEXT NOT NULL, capability TEXT NOT NULL,
    action_type TEXT NOT NULL, target TEXT NOT NULL, parameters_json TEXT NOT NULL,
    rationale TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'rejected')),
    decided_by TEXT, decided_at TEXT,
    UNIQUE (from_system, request_id, position));
CREATE TABLE IF NOT EXISTS inbox_effects (
    inbox_id INTEGER PRIMARY KEY REFERENCES approval_inbox (id),
    applied_at TEXT NOT NULL, effect TEXT NOT NULL);
