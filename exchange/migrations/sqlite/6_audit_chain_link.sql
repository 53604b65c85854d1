-- The store checks each chained row's link and moves its chain's head
-- (exchange::audit::chain). A row with a hash is refused unless its
-- `prev_hash` is its chain's head at that moment, and once inserted it
-- becomes the head (its hash, its seq, the count one more). SQLite runs
-- row triggers row by row, so a multi-row INSERT links through its own
-- rows. So an appender that already knows the head (the trail's writer,
-- from its last commit) appends with one statement and no transaction
-- around it; one whose knowledge is stale is refused as a whole and takes
-- the head first. Rows without a hash (outside the chain) pass: the
-- verifier names them.
CREATE TRIGGER audit_chain_link BEFORE INSERT ON audit_trail
    WHEN NEW.hash IS NOT NULL
    BEGIN
        SELECT RAISE(ABORT, 'audit chain head moved')
        WHERE NEW.prev_hash IS NOT (SELECT hash FROM audit_chain_head WHERE system = NEW.system);
    END;
CREATE TRIGGER audit_chain_advance AFTER INSERT ON audit_trail
    WHEN NEW.hash IS NOT NULL
    BEGIN
        UPDATE audit_chain_head SET hash = NEW.hash, seq = NEW.seq, count = count + 1
        WHERE system = NEW.system;
    END;
