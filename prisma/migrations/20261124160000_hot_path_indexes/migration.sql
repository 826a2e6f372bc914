-- Reads on the settle path that strangers could otherwise make long (found by review):
--
-- The payer's value in flight is read under the merchant's fee lock at every reservation: only its
-- settlements in the sending states, never every settlement the payer ever had (a payer can make many
-- failed ones for free, one settle request each).
CREATE INDEX "settlements_in_flight_by_payer" ON "settlements" ("payer", "chain_id", "token_address")
  WHERE "state" IN ('collect_fee', 'fee_collected', 'executing');

-- A failure that cost something on chain always carries one of our transactions; failures before anything
-- was sent (free to make) are not read by the failure counts at all.
DROP INDEX "settlements_failed_by_payer";
DROP INDEX "settlements_failed_by_merchant";
CREATE INDEX "settlements_sent_failures_by_payer" ON "settlements" ("payer", "chain_id", "updated_at")
  WHERE "state" = 'failed' AND ("fee_tx_hash" IS NOT NULL OR "settlement_tx_hash" IS NOT NULL
    OR "error_details" ? 'tx_hash' OR "error_details" ? 'wallet_deploy_tx_hash');
CREATE INDEX "settlements_sent_failures_by_merchant" ON "settlements" ("merchant", "chain_id", "updated_at")
  WHERE "state" = 'failed' AND ("fee_tx_hash" IS NOT NULL OR "settlement_tx_hash" IS NOT NULL
    OR "error_details" ? 'tx_hash' OR "error_details" ? 'wallet_deploy_tx_hash');

-- The same function, its failure count over the index above (the predicate written out, so the planner can
-- use the partial index; settlement_costly_failure still decides).
CREATE OR REPLACE FUNCTION settlement_payer_in_flight_locked(lock_key TEXT, p_payer TEXT, p_chain_id INTEGER, p_token TEXT, p_exclude TEXT, p_failures_since TIMESTAMPTZ)
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
