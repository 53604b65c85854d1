-- The push relay (hub::push, store::push). A caller's push configurations
-- for its own tasks (`push_configs`: the URL the hub delivers to, and the
-- caller's own token and credentials for its receiver, sent to that
-- receiver only). The hub's own registration with the provider, one per
-- task (`push_relays`: the webhook id the provider posts to, and the
-- SHA-256 of the secret it must present). Events already taken, by the
-- digest of their body (`push_events`: a provider's retry is not relayed
-- twice). Deliveries that failed every attempt (`push_dead_letters`, kept
-- to the newest 1000).
CREATE TABLE push_configs (
    provider TEXT NOT NULL, task_id TEXT NOT NULL, id TEXT NOT NULL,
    caller TEXT NOT NULL, url TEXT NOT NULL, token TEXT,
    auth_scheme TEXT, auth_credentials TEXT, created_at TEXT NOT NULL,
    PRIMARY KEY (provider, task_id, id));
CREATE TABLE push_relays (
    relay_id TEXT PRIMARY KEY, provider TEXT NOT NULL, task_id TEXT NOT NULL,
    secret_digest TEXT NOT NULL, created_at TEXT NOT NULL,
    UNIQUE (provider, task_id));
CREATE TABLE push_events (
    relay_id TEXT NOT NULL, digest TEXT NOT NULL, received_at TEXT NOT NULL,
    PRIMARY KEY (relay_id, digest));
CREATE TABLE push_dead_letters (
    id TEXT PRIMARY KEY, failed_at TEXT NOT NULL, caller TEXT NOT NULL,
    provider TEXT NOT NULL, task_id TEXT NOT NULL, config_id TEXT NOT NULL,
    url TEXT NOT NULL, attempts BIGINT NOT NULL, last_error TEXT NOT NULL);
CREATE INDEX push_dead_letters_failed ON push_dead_letters (failed_at);
