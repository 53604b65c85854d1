-- The hub's signed receipt of each exchange it recorded is kept in the
-- record's own row (exchange::receipt, exchange::audit::Stamp): written by
-- the same insert as the record, so keeping it costs no commit of its own.
-- Neither column is hashed (as `seq` is not): the receipt names the
-- record's digest, so the chain still proves the record, and the
-- receipt's signature proves the receipt. A peer's trail leaves both null.
ALTER TABLE audit_trail ADD COLUMN receipt_id TEXT;
ALTER TABLE audit_trail ADD COLUMN receipt TEXT;
-- A party fetches a receipt by its id, or the receipts of a request id
-- (a provider knows the envelope's, not the receipt's).
CREATE UNIQUE INDEX audit_trail_receipt ON audit_trail (receipt_id) WHERE receipt_id IS NOT NULL;
CREATE INDEX audit_trail_receipt_request ON audit_trail (request_id) WHERE receipt_id IS NOT NULL;
