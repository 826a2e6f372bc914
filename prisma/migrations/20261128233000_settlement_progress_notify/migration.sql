-- Issue 41, item 3: a request waiting for its settlement's outcome costs nothing until the outcome is known.
-- Postgres tells the API processes (LISTEN settlement_progress) when a settlement's progress changes, instead of
-- each process reading every waited-for settlement every few milliseconds. One notification per statement (a
-- batch's statement names all its settlements), delivered at commit, so a reader never sees it before the row.
-- What wakes: a final state, a state a waiter tells apart (a wallet deployment's end, which may make a settlement
-- stoppable again), the settlement's own transaction hash, or its waiting reason (someone else's transaction
-- confirming); not the forward moves between the unsent and sending states, which no waiter acts on.
-- Payload: settlement ids separated by commas, or `b:<batch id>` when a batch's settle transaction is signed
-- (readers then look again at their settlements that have no transaction yet). At most 150 ids per
-- notification: a payload is limited to 8000 bytes.

CREATE FUNCTION settlement_progress_notify() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  payload text;
BEGIN
  FOR payload IN
    SELECT string_agg(c.id, ',')
      FROM (SELECT n.id, (row_number() OVER () - 1) / 150 AS chunk
              FROM changed_new n JOIN changed_old o ON o.id = n.id
             WHERE (n.state IS DISTINCT FROM o.state
                    -- the forward moves between states no waiter tells apart (still unsent or on its way, never
                    -- becoming stoppable again) wake nobody: most of a settlement's moves
                    AND NOT (o.state IN ('pending', 'check_allowance', 'collect_fee', 'fee_collected', 'executing')
                             AND n.state IN ('check_allowance', 'collect_fee', 'fee_collected', 'executing')))
                OR n.settlement_tx_hash IS DISTINCT FROM o.settlement_tx_hash
                OR n.waiting_reason IS DISTINCT FROM o.waiting_reason) c
     GROUP BY c.chunk
  LOOP
    PERFORM pg_notify('settlement_progress', payload);
  END LOOP;
  RETURN NULL;
END $$;

CREATE TRIGGER settlements_progress_notify
  AFTER UPDATE ON settlements
  REFERENCING OLD TABLE AS changed_old NEW TABLE AS changed_new
  FOR EACH STATEMENT EXECUTE FUNCTION settlement_progress_notify();

-- A payment's own transaction (its transfer, or its batch's settle) got a hash: a signed attempt, or the hash a
-- relayer service reported. Fees and wallet deployments are never named in an answer, so they wake nobody.
CREATE FUNCTION payment_transaction_notify() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  payload text;
BEGIN
  IF TG_TABLE_NAME = 'chain_transaction_attempts' THEN
    FOR payload IN
      SELECT DISTINCT CASE WHEN t.purpose = 'settle' THEN 'b:' || t.settlement_id ELSE t.settlement_id END
        FROM changed_new a JOIN chain_transactions t ON t.id = a.transaction_id
       WHERE t.purpose IN ('transfer', 'settle')
    LOOP
      PERFORM pg_notify('settlement_progress', payload);
    END LOOP;
  ELSE
    FOR payload IN
      SELECT DISTINCT CASE WHEN n.purpose = 'settle' THEN 'b:' || n.settlement_id ELSE n.settlement_id END
        FROM changed_new n JOIN changed_old o ON o.id = n.id
       WHERE n.purpose IN ('transfer', 'settle')
         AND (n.provider_hashes IS DISTINCT FROM o.provider_hashes OR n.mined_hash IS DISTINCT FROM o.mined_hash)
    LOOP
      PERFORM pg_notify('settlement_progress', payload);
    END LOOP;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER chain_transaction_attempts_progress_notify
  AFTER INSERT ON chain_transaction_attempts
  REFERENCING NEW TABLE AS changed_new
  FOR EACH STATEMENT EXECUTE FUNCTION payment_transaction_notify();

CREATE TRIGGER chain_transactions_progress_notify
  AFTER UPDATE ON chain_transactions
  REFERENCING OLD TABLE AS changed_old NEW TABLE AS changed_new
  FOR EACH STATEMENT EXECUTE FUNCTION payment_transaction_notify();
