-- Issue 41, item 2: no hot merchant. A merchant's fee reservation (check_allowance -> collect_fee) used to take
-- an advisory lock per merchant and, under it, sum the fees of every settlement of the merchant in collect_fee:
-- the lock was held for a scan as long as the merchant's settlements in flight (hundreds under load, the atomic
-- path keeping them in collect_fee until their batch is mined), so one merchant's settlements queued behind
-- each other for about 30 ms each. The sum is now kept as it changes, in one row per (merchant, chain, token),
-- by a trigger on every writer of settlements; a reservation locks that row (FOR UPDATE, held to the end of its
-- statement as the advisory lock was) and reads one number. Reservations of one merchant still never overlap
-- (never more reserved than the merchant can pay), but each holds the lock for a constant time.

CREATE TABLE "merchant_fees_in_flight" (
  "merchant" TEXT NOT NULL,
  "chain_id" INTEGER NOT NULL,
  "token_address" TEXT NOT NULL,
  "in_flight" NUMERIC NOT NULL DEFAULT 0,
  CONSTRAINT "merchant_fees_in_flight_pkey" PRIMARY KEY ("merchant", "chain_id", "token_address")
);

INSERT INTO "merchant_fees_in_flight" ("merchant", "chain_id", "token_address", "in_flight")
SELECT merchant, chain_id, token_address, sum(fee_amount::numeric) FROM settlements WHERE state = 'collect_fee' GROUP BY 1, 2, 3;

-- SECURITY DEFINER: whoever moves a settlement (the worker, an operator, the API stopping an unsent one) keeps
-- the sum right, while only the migration's owner may write the table itself (it is not the API role's).
CREATE FUNCTION merchant_fees_in_flight_track() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
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

CREATE TRIGGER settlements_fees_in_flight
  AFTER INSERT OR DELETE OR UPDATE OF state, fee_amount, merchant, chain_id, token_address ON settlements
  FOR EACH ROW EXECUTE FUNCTION merchant_fees_in_flight_track();

-- Same signature and meaning as before (the fees in flight of the merchant, this settlement's own excluded,
-- with reservations of the merchant serialized to the end of the caller's transaction); `lock_key` is unused.
CREATE OR REPLACE FUNCTION settlement_fees_in_flight_locked(lock_key TEXT, p_merchant TEXT, p_chain_id INTEGER, p_token TEXT, p_exclude TEXT)
RETURNS NUMERIC LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
  total NUMERIC;
  own NUMERIC;
BEGIN
  SELECT in_flight INTO total FROM merchant_fees_in_flight
   WHERE merchant = p_merchant AND chain_id = p_chain_id AND token_address = p_token FOR UPDATE;
  IF NOT FOUND THEN
    INSERT INTO merchant_fees_in_flight (merchant, chain_id, token_address) VALUES (p_merchant, p_chain_id, p_token) ON CONFLICT DO NOTHING;
    SELECT in_flight INTO total FROM merchant_fees_in_flight
     WHERE merchant = p_merchant AND chain_id = p_chain_id AND token_address = p_token FOR UPDATE;
  END IF;
  SELECT coalesce(sum(fee_amount::numeric), 0) INTO own FROM settlements
   WHERE id = p_exclude AND merchant = p_merchant AND chain_id = p_chain_id AND token_address = p_token AND state = 'collect_fee';
  RETURN total - own;
END $$;
