-- The fee reservation in one round trip (docs/decisions.md, "Abuse"): the merchant's fees in flight, read
-- after taking the merchant's transaction-scoped advisory lock. A VOLATILE function's query takes its own
-- snapshot after the lock is held, so it sees every reservation committed before; the lock is held until
-- the calling statement's transaction commits, so the next reserver sees this one.
CREATE FUNCTION settlement_fees_in_flight_locked(lock_key TEXT, p_merchant TEXT, p_chain_id INTEGER, p_token TEXT, p_exclude TEXT)
RETURNS NUMERIC LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  in_flight NUMERIC;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(lock_key, 0));
  SELECT coalesce(sum(fee_amount::numeric), 0) INTO in_flight FROM settlements
   WHERE merchant = p_merchant AND chain_id = p_chain_id AND token_address = p_token AND state = 'collect_fee' AND id <> p_exclude;
  RETURN in_flight;
END $$;
