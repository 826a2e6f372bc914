-- Review of 20261128234500 (issue 41, item 2): the SECURITY DEFINER functions that keep merchant_fees_in_flight
-- let the API's database role write that worker-only table.
-- 1. EXECUTE was PUBLIC's (a function's default): the API role could attach merchant_fees_in_flight_track() to a
--    temporary table of its own and insert any (merchant, fee) into it, and call settlement_fees_in_flight_locked.
--    A trigger fires whoever writes settlements: EXECUTE is checked when a trigger is created, not when it fires.
-- 2. Their search_path ("$user", public, taken FROM CURRENT) left pg_temp searched first: a temporary table
--    named merchant_fees_in_flight in the API's session took the trigger's writes for that session's moves.
-- 3. A fee that is no amount ('NaN', '-Infinity', negative) entered the sum: NaN stays in it for good (every
--    later reservation of the merchant refused), a negative one lets reservations past the merchant's allowance.
CREATE OR REPLACE FUNCTION merchant_fees_in_flight_track() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
  IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.state = 'collect_fee' AND NEW.fee_amount !~ '^[0-9]{1,78}$' THEN
    RAISE EXCEPTION 'settlement % in collect_fee with fee %: not an amount', NEW.id, NEW.fee_amount USING ERRCODE = 'check_violation';
  END IF;
  IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.state = 'collect_fee' THEN
    UPDATE merchant_fees_in_flight SET in_flight = in_flight - OLD.fee_amount::numeric
     WHERE merchant = OLD.merchant AND chain_id = OLD.chain_id AND token_address = OLD.token_address;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.state = 'collect_fee' THEN
    INSERT INTO merchant_fees_in_flight AS m (merchant, chain_id, token_address, in_flight)
    VALUES (NEW.merchant, NEW.chain_id, NEW.token_address, NEW.fee_amount::numeric)
    ON CONFLICT (merchant, chain_id, token_address) DO UPDATE SET in_flight = m.in_flight + EXCLUDED.in_flight;
  END IF;
  RETURN NULL;
END $$;

-- pg_temp last (the schema the tables were made in, then nothing a session can shadow them with)
DO $$
BEGIN
  EXECUTE format('ALTER FUNCTION merchant_fees_in_flight_track() SET search_path = %I, pg_temp', current_schema());
  EXECUTE format('ALTER FUNCTION settlement_fees_in_flight_locked(text, text, integer, text, text) SET search_path = %I, pg_temp', current_schema());
END $$;

REVOKE EXECUTE ON FUNCTION merchant_fees_in_flight_track() FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION settlement_fees_in_flight_locked(text, text, integer, text, text) FROM PUBLIC;

-- 4. 20261128234500 backfilled the sums before its trigger existed: a settlement a running worker moved into
--    or out of collect_fee in between (committed after the backfill's snapshot, before CREATE TRIGGER's lock)
--    was counted by neither, for good. Summed again here, with settlements locked against writers (the trigger
--    exists now, so every move after this is kept). A reservation under way may deadlock with this lock: one of
--    the two is then cancelled by Postgres (the worker retries its job; a failed migration is run again).
LOCK TABLE settlements IN SHARE ROW EXCLUSIVE MODE;
UPDATE merchant_fees_in_flight SET in_flight = 0;
INSERT INTO merchant_fees_in_flight AS m (merchant, chain_id, token_address, in_flight)
SELECT merchant, chain_id, token_address, sum(fee_amount::numeric) FROM settlements WHERE state = 'collect_fee' GROUP BY 1, 2, 3
ON CONFLICT (merchant, chain_id, token_address) DO UPDATE SET in_flight = EXCLUDED.in_flight;
