-- Calls counted along limited edges (server::quotas): one row per
-- consumer, provider, capability and fixed window of one limit (`kind`
-- `rate`, of `seconds`, or `day`). A check is one conditional upsert of
-- its window's row; rows of windows that ended a day ago are deleted.
-- sqlite/101_quotas.sql is the same schema.
CREATE TABLE quota_counts (
    consumer TEXT NOT NULL, provider TEXT NOT NULL, capability TEXT NOT NULL,
    kind TEXT NOT NULL, seconds BIGINT NOT NULL,
    window_start BIGINT NOT NULL, window_end BIGINT NOT NULL,
    calls BIGINT NOT NULL,
    PRIMARY KEY (consumer, provider, capability, kind, seconds, window_start));
CREATE INDEX quota_counts_window_end ON quota_counts (window_end);
