-- Failure accounting and the payer's value in flight (docs/decisions.md, "No free work: failure accounting").

-- A failure on chain that cost us (or the merchant) something and that the payer caused: our transfer was
-- sent and failed, or an atomic item failed in a mined settle transaction, or the transfer failed after the
-- merchant's fee. Not counted: fee reverts (the merchant's doing, paused by the fee-revert pause), an
-- authorization that paid the merchant elsewhere (a front-runner must not get an honest payer paused), and
-- a whole settle transaction that reverted (it cannot be pinned on one of its items). The one definition,
-- used by the repository's counts and by the reservation below.
CREATE FUNCTION settlement_costly_failure(s settlements) RETURNS BOOLEAN LANGUAGE sql IMMUTABLE AS $$
  SELECT s.state = 'failed' AND s.error_code = 'settlement_failed' AND NOT s.merchant_paid
     AND coalesce(s.error_details->>'merchant_paid', '') <> 'true'
     AND (s.fee_tx_hash IS NOT NULL OR s.settlement_tx_hash IS NOT NULL
          OR coalesce(s.error_details ? 'tx_hash', false) OR coalesce(s.error_details ? 'wallet_deploy_tx_hash', false))
     AND coalesce(s.error_details->>'reason', '') NOT LIKE 'settle transaction reverted%'
$$;

-- A payer's value in flight, read after taking the payer's transaction-scoped advisory lock: the amounts of
-- its settlements in the states that send money (collect_fee, fee_collected, executing), how many there
-- are, and its costly failures since `p_failures_since` with the latest one's time. Read under the lock,
-- an item that leaves the sending states by failing is never missed by both counts at once, so no more
-- items are sent than the pause allows. Called by the reserving transition after the merchant's fee lock
-- (always merchant first, then payer, so two reservations never wait on each other in a cycle); held
-- until that statement's transaction commits.
CREATE FUNCTION settlement_payer_in_flight_locked(lock_key TEXT, p_payer TEXT, p_chain_id INTEGER, p_token TEXT, p_exclude TEXT, p_failures_since TIMESTAMPTZ)
RETURNS TABLE (in_flight NUMERIC, items INTEGER, failures INTEGER, last_failure_at TIMESTAMPTZ) LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(lock_key, 0));
  RETURN QUERY
    SELECT f.in_flight, f.items, c.failures, c.last_failure_at
      FROM (SELECT coalesce(sum(s.amount::numeric), 0) AS in_flight, count(*)::int AS items FROM settlements s
             WHERE s.payer = p_payer AND s.chain_id = p_chain_id AND s.token_address = p_token
               AND s.state IN ('collect_fee', 'fee_collected', 'executing') AND s.id <> p_exclude) f,
           (SELECT count(*)::int AS failures, max(s.updated_at) AS last_failure_at FROM settlements s
             WHERE s.payer = p_payer AND s.chain_id = p_chain_id AND s.state = 'failed'
               AND (s.fee_tx_hash IS NOT NULL OR s.settlement_tx_hash IS NOT NULL
                    OR s.error_details ? 'tx_hash' OR s.error_details ? 'wallet_deploy_tx_hash')
               AND s.updated_at > p_failures_since AND settlement_costly_failure(s)) c;
END $$;

-- Reads on the settle path that strangers could otherwise make long (found by review). The payer's value
-- in flight is read under the merchant's fee lock at every reservation: only its settlements in the sending
-- states, never every settlement the payer ever had (a payer can make failed ones for free, one settle
-- request each).
CREATE INDEX "settlements_in_flight_by_payer" ON "settlements" ("payer", "chain_id", "token_address")
  WHERE "state" IN ('collect_fee', 'fee_collected', 'executing');
-- Failures on chain counted per payer and per merchant within a window. A failure that cost something
-- always carries one of our transactions (the predicate is written out in the counts too, so the planner
-- uses these); failures before anything was sent, free to make, are not read at all.
CREATE INDEX "settlements_sent_failures_by_payer" ON "settlements" ("payer", "chain_id", "updated_at")
  WHERE "state" = 'failed' AND ("fee_tx_hash" IS NOT NULL OR "settlement_tx_hash" IS NOT NULL
    OR "error_details" ? 'tx_hash' OR "error_details" ? 'wallet_deploy_tx_hash');
CREATE INDEX "settlements_sent_failures_by_merchant" ON "settlements" ("merchant", "chain_id", "updated_at")
  WHERE "state" = 'failed' AND ("fee_tx_hash" IS NOT NULL OR "settlement_tx_hash" IS NOT NULL
    OR "error_details" ? 'tx_hash' OR "error_details" ? 'wallet_deploy_tx_hash');
-- whether a payer has paid a merchant before (a paused merchant still takes payments from its known payers)
CREATE INDEX "settlements_settled_pairs" ON "settlements" ("merchant", "payer", "chain_id") WHERE "state" = 'settled';
