-- The hub's own signing keys (server::signing): the agent cards it serves
-- are signed with the newest; every key stays, so a signature made with an
-- older one still verifies against /.well-known/jwks.json.
CREATE TABLE IF NOT EXISTS signing_keys (
    kid TEXT PRIMARY KEY,
    pkcs8 TEXT NOT NULL,
    created_at TEXT NOT NULL);
