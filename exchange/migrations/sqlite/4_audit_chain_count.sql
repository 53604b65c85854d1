-- How many records each chain holds (exchange::audit::chain): the head
-- counts the records appended to its chain, and a signed checkpoint
-- (exchange::audit::checkpoint) signs that count with its seq and hash, so
-- a checkpoint or an anchor kept outside the store tells a chain that was
-- cut short, its head moved back with it. Chains that exist already are
-- counted here once: their rows with a hash. Checkpoints signed before
-- this migration keep NULL: they sign no count and still verify.
ALTER TABLE audit_chain_head ADD COLUMN count INTEGER NOT NULL DEFAULT 0;
UPDATE audit_chain_head SET count = (
    SELECT COUNT(*) FROM audit_trail
    WHERE audit_trail.system = audit_chain_head.system AND audit_trail.hash IS NOT NULL);
ALTER TABLE audit_checkpoints ADD COLUMN count INTEGER;
