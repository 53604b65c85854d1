-- The people who may use the canvas (server::ui_auth::people): their role,
-- the member system a member-scoped person is bound to (NULL: the whole
-- exchange), and who made the entry (the UI users file, an admin, a
-- member's identity provider). A person who logs in only through an
-- identity provider has no password hash.
CREATE TABLE IF NOT EXISTS people (
    username TEXT PRIMARY KEY,
    password_hash TEXT,
    role TEXT NOT NULL,
    member TEXT,
    origin TEXT NOT NULL,
    updated_at TEXT NOT NULL);
