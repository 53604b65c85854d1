-- Where each UI account has logged in from (server::ui_auth::throttle):
-- one row per account (its trimmed, lower-case username) and client
-- address, written at every successful login, whichever replica took it.
-- An attempt from an address the account logged in from within the last
-- 30 days is charged to a failure budget of its own, so a stranger
-- spending the account's budget does not lock the person out of a place
-- it has used before. Rows older than that are deleted now and then.
-- sqlite/120_login_known_sources.sql is the same schema.
CREATE TABLE login_known_sources (
    username TEXT NOT NULL, address TEXT NOT NULL,
    last_success_ms BIGINT NOT NULL,
    PRIMARY KEY (username, address));
CREATE INDEX login_known_sources_last_success
    ON login_known_sources (last_success_ms);
