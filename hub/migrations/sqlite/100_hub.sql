-- The hub's own tables (versions 100 and up; the exchange crate's audit
-- trail and inbox are versions 1-99 of the same database). `IF NOT
-- EXISTS` throughout: a file made before migrations already has most of
-- them, and `server::store::adopt` has mended what the old code changed in
-- place. postgres/100_hub.sql is the same schema.

-- A consult's stored answer, by idempotency key (server::idempotency).
CREATE TABLE IF NOT EXISTS idempotency (
    caller TEXT NOT NULL, provider TEXT NOT NULL, capability TEXT NOT NULL,
    request_id TEXT NOT NULL, answer TEXT NOT NULL, trace_id TEXT NOT NULL,
    created_at TEXT NOT NULL, input_digest TEXT, reply TEXT,
    PRIMARY KEY (caller, provider, capability, request_id));

-- Who is executing a consult right now (server::idempotency): the unique
-- key that lets exactly one call of a key run, in any replica.
CREATE TABLE IF NOT EXISTS idempotency_claims (
    caller TEXT NOT NULL, provider TEXT NOT NULL, capability TEXT NOT NULL,
    request_id TEXT NOT NULL, claimed_by TEXT NOT NULL, claimed_at TEXT NOT NULL,
    PRIMARY KEY (caller, provider, capability, request_id));

-- Established edges and canvas positions (server::edges).
CREATE TABLE IF NOT EXISTS edges (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    consumer TEXT NOT NULL, provider TEXT NOT NULL, capability TEXT NOT NULL,
    created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS node_positions (
    node TEXT PRIMARY KEY, x REAL NOT NULL, y REAL NOT NULL, updated_at TEXT NOT NULL);

-- One-time events in the life of the database (`edges_seeded`).
CREATE TABLE IF NOT EXISTS hub_marks (name TEXT PRIMARY KEY, at TEXT NOT NULL);

-- Every task the hub forwarded (server::task_records); `claimed_by` is the
-- hub process forwarding a submission right now.
CREATE TABLE IF NOT EXISTS tasks (
    caller TEXT NOT NULL, idempotency_key TEXT NOT NULL,
    provider TEXT NOT NULL, capability TEXT NOT NULL,
    input_digest TEXT NOT NULL, task_id TEXT, state TEXT NOT NULL,
    deadline TEXT NOT NULL, created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL, finished_at TEXT,
    retries INTEGER NOT NULL DEFAULT 0, claimed_by TEXT,
    UNIQUE (caller, idempotency_key));
CREATE INDEX IF NOT EXISTS tasks_by_task ON tasks (provider, task_id);

-- Whose task is it (server::task_owners).
CREATE TABLE IF NOT EXISTS task_owners (
    provider TEXT NOT NULL, task_id TEXT NOT NULL, caller TEXT NOT NULL,
    capability TEXT NOT NULL, created_at TEXT NOT NULL,
    PRIMARY KEY (provider, task_id));

-- Every negotiation turn that crossed the hub (server::negotiations).
CREATE TABLE IF NOT EXISTS negotiation_turns (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL,
    context_id TEXT NOT NULL, consumer TEXT NOT NULL, provider TEXT NOT NULL,
    capability TEXT NOT NULL, data_capability TEXT NOT NULL,
    sent TEXT NOT NULL, answer TEXT, reason TEXT, detail TEXT NOT NULL,
    trace_id TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS negotiation_turns_pair
    ON negotiation_turns (provider, data_capability, consumer, seq);

-- The hub's own local write on an approval (server::budget_plans).
CREATE TABLE IF NOT EXISTS budget_plans (
    department TEXT PRIMARY KEY, amount REAL NOT NULL,
    approved_by TEXT NOT NULL, approved_at TEXT NOT NULL,
    trace_id TEXT NOT NULL, inbox_id INTEGER NOT NULL,
    proposed_by TEXT NOT NULL);

-- The prober's results, shared by the replica that probes with the others
-- (server::cluster; a single hub writes none).
CREATE TABLE IF NOT EXISTS peer_health (
    system TEXT PRIMARY KEY,
    probe TEXT NOT NULL, card TEXT, plane TEXT,
    updated_at TEXT NOT NULL, prober TEXT NOT NULL);

-- Login attempts counted by every replica together (server::ui_auth::
-- throttle, shared mode): a token bucket per address and per username,
-- as of `at_ms` (milliseconds since the epoch).
CREATE TABLE IF NOT EXISTS login_buckets (
    kind TEXT NOT NULL, key TEXT NOT NULL,
    tokens REAL NOT NULL, at_ms INTEGER NOT NULL,
    PRIMARY KEY (kind, key));
