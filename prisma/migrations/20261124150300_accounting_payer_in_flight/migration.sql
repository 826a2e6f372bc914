-- Failure accounting and the payer's value in flight (docs/decisions.md, "No free work: failure accounting").

-- A payer's value in flight, read after taking the payer's transaction-scoped advisory lock: the amounts of
-- its settlements in the states that send money (collect_fee, fee_collected, executing), and how many there
-- are. Called by the reserving transition after the merchant's fee lock (always merchant first, then payer,
-- so two reservations never wait on each other in a cycle); held until that statement's transaction commits.
CREATE FUNCTION settlement_payer_in_flight_locked(lock_key TEXT, p_payer TEXT, p_chain_id INTEGER, p_token TEXT, p_exclude TEXT)
RETURNS TABLE (in_flight NUMERIC, items INTEGER) LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(lock_key, 0));
  RETURN QUERY
    SELECT coalesce(sum(amount::numeric), 0), count(*)::int FROM settlements
     WHERE payer = p_payer AND chain_id = p_chain_id AND token_address = p_token
       AND state IN ('collect_fee', 'fee_collected', 'executing') AND id <> p_exclude;
END $$;

-- Failures on chain counted per payer and per merchant within a window: only failed rows are read.
CREATE INDEX "settlements_failed_by_payer" ON "settlements" ("payer", "chain_id", "updated_at") WHERE "state" = 'failed';
CREATE INDEX "settlements_failed_by_merchant" ON "settlements" ("merchant", "chain_id", "updated_at") WHERE "state" = 'failed';
-- whether a payer has paid a merchant before (a paused merchant still takes payments from its known payers)
CREATE INDEX "settlements_settled_pairs" ON "settlements" ("merchant", "payer", "chain_id") WHERE "state" = 'settled';
