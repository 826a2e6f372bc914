-- Issue 42, item 5, step 3 (docs/plans/chain-family-seam.md): records keyed by network. A second chain family
-- (Solana, `solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1`) has no chain id, so verifications, settlements, chain
-- transactions and the fees-in-flight counters gain `network`, the CAIP-2 id, backfilled for every EVM row from
-- `chain_id`. `chain_id` stays, and every query still asks by it in this step (no EVM query changes): hence no
-- index on `network` yet.
--
-- verifications already had a `network` column: the network's name as the client wrote it (`base-sepolia` on
-- Form B and x402 v1 bodies, the CAIP-2 id elsewhere), echoed in Form B answers and webhooks. It is renamed
-- `network_name` so that `network` means the same on every table.
ALTER TABLE "verifications" RENAME COLUMN "network" TO "network_name";
ALTER TABLE "verifications" ADD COLUMN "network" TEXT;
UPDATE "verifications" SET "network" = 'eip155:' || "chain_id";
ALTER TABLE "verifications" ALTER COLUMN "network" SET NOT NULL;

ALTER TABLE "settlements" ADD COLUMN "network" TEXT;
UPDATE "settlements" SET "network" = 'eip155:' || "chain_id";
ALTER TABLE "settlements" ALTER COLUMN "network" SET NOT NULL;

ALTER TABLE "chain_transactions" ADD COLUMN "network" TEXT;
UPDATE "chain_transactions" SET "network" = 'eip155:' || "chain_id";
ALTER TABLE "chain_transactions" ALTER COLUMN "network" SET NOT NULL;

-- Rolling deploy: a process older than this migration inserts rows without `network` (and, into verifications,
-- its client-written name as `network`). These triggers give such a row its network from its chain id; a row
-- of this version names its network, and the WHEN clause keeps the trigger from even running for it.
CREATE FUNCTION network_from_chain_id() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.network := 'eip155:' || NEW.chain_id;
  RETURN NEW;
END $$;

CREATE FUNCTION verification_network_of_older_writer() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.network_name := NEW.network;
  NEW.network := 'eip155:' || NEW.chain_id;
  RETURN NEW;
END $$;

CREATE TRIGGER verifications_network_of_older_writer BEFORE INSERT ON "verifications"
  FOR EACH ROW WHEN (NEW.network_name IS NULL) EXECUTE FUNCTION verification_network_of_older_writer();
CREATE TRIGGER settlements_network_from_chain_id BEFORE INSERT ON "settlements"
  FOR EACH ROW WHEN (NEW.network IS NULL) EXECUTE FUNCTION network_from_chain_id();
CREATE TRIGGER chain_transactions_network_from_chain_id BEFORE INSERT ON "chain_transactions"
  FOR EACH ROW WHEN (NEW.network IS NULL) EXECUTE FUNCTION network_from_chain_id();

-- The fee counters: one row per (merchant, chain, token), written only by the trigger on settlements and the
-- reservation function below, which now copy the settlement's network. The key stays (merchant, chain_id,
-- token_address) while every EVM row has a chain id; it becomes (merchant, network, token_address) when a
-- second family writes settlements.
ALTER TABLE "merchant_fees_in_flight" ADD COLUMN "network" TEXT;
UPDATE "merchant_fees_in_flight" SET "network" = 'eip155:' || "chain_id";
ALTER TABLE "merchant_fees_in_flight" ALTER COLUMN "network" SET NOT NULL;

-- As in 20261129000500 (the fee must be an amount), with the network written.
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
    INSERT INTO merchant_fees_in_flight AS m (merchant, chain_id, network, token_address, in_flight)
    VALUES (NEW.merchant, NEW.chain_id, NEW.network, NEW.token_address, NEW.fee_amount::numeric)
    ON CONFLICT (merchant, chain_id, token_address) DO UPDATE SET in_flight = m.in_flight + EXCLUDED.in_flight;
  END IF;
  RETURN NULL;
END $$;

-- As in 20261128234500, with the network written when the counter row is first made.
CREATE OR REPLACE FUNCTION settlement_fees_in_flight_locked(lock_key TEXT, p_merchant TEXT, p_chain_id INTEGER, p_token TEXT, p_exclude TEXT)
RETURNS NUMERIC LANGUAGE plpgsql VOLATILE SECURITY DEFINER AS $$
DECLARE
  total NUMERIC;
  own NUMERIC;
BEGIN
  SELECT in_flight INTO total FROM merchant_fees_in_flight
   WHERE merchant = p_merchant AND chain_id = p_chain_id AND token_address = p_token FOR UPDATE;
  IF NOT FOUND THEN
    INSERT INTO merchant_fees_in_flight (merchant, chain_id, network, token_address) VALUES (p_merchant, p_chain_id, 'eip155:' || p_chain_id, p_token) ON CONFLICT DO NOTHING;
    SELECT in_flight INTO total FROM merchant_fees_in_flight
     WHERE merchant = p_merchant AND chain_id = p_chain_id AND token_address = p_token FOR UPDATE;
  END IF;
  SELECT coalesce(sum(fee_amount::numeric), 0) INTO own FROM settlements
   WHERE id = p_exclude AND merchant = p_merchant AND chain_id = p_chain_id AND token_address = p_token AND state = 'collect_fee';
  RETURN total - own;
END $$;

-- CREATE OR REPLACE resets a function's settings: pg_temp last again, as 20261129000500 set it (EXECUTE stays revoked)
DO $$
BEGIN
  EXECUTE format('ALTER FUNCTION merchant_fees_in_flight_track() SET search_path = %I, pg_temp', current_schema());
  EXECUTE format('ALTER FUNCTION settlement_fees_in_flight_locked(text, text, integer, text, text) SET search_path = %I, pg_temp', current_schema());
END $$;
