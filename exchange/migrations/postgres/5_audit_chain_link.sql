-- The store checks each chained row's link and moves its chain's head
-- (exchange::audit::chain). A row with a hash is refused unless its
-- `prev_hash` is its chain's head when the head's row lock is taken, and
-- it becomes the head in the same step (its hash, its seq, the count one
-- more). The check and the move are one UPDATE in a BEFORE trigger: an
-- AFTER row trigger would run only at the end of the statement, and a
-- waiting UPDATE re-reads the row another transaction committed, so two
-- appenders that both believed the same head cannot both succeed. So an
-- appender that already knows the head (the trail's writer, from its last
-- commit) appends with one statement and no transaction around it; one
-- whose knowledge is stale is refused as a whole and takes the head
-- first. Rows without a hash (outside the chain) pass: the verifier names
-- them.
CREATE FUNCTION audit_chain_link() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE audit_chain_head SET hash = NEW.hash, seq = NEW.seq, count = count + 1
        WHERE system = NEW.system AND hash = NEW.prev_hash;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'audit chain head moved';
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER audit_chain_link BEFORE INSERT ON audit_trail
    FOR EACH ROW WHEN (NEW.hash IS NOT NULL) EXECUTE FUNCTION audit_chain_link();
