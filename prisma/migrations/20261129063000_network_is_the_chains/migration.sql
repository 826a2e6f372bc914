-- Issue 42 (review of the network column, 20261129060000): a row's network is its chain's. An EVM row's
-- `network` is `eip155:<chain_id>`, exactly; a row of another family has no chain id (the column becomes
-- nullable when a second family writes rows) and a network outside `eip155`. A database writer can then not
-- store a verification or settlement whose network disagrees with its chain (the payment key is spelt from the
-- network's family: a lying network would give one payment a second live key), and every reader may take
-- either column for the other. Checked on insert and update; every stored row already holds it (backfilled
-- from chain_id, written by the registry since).
ALTER TABLE "verifications" ADD CONSTRAINT "verifications_network_is_the_chains"
  CHECK ("network" = 'eip155:' || "chain_id" OR ("chain_id" IS NULL AND "network" !~ '^eip155:'));
ALTER TABLE "settlements" ADD CONSTRAINT "settlements_network_is_the_chains"
  CHECK ("network" = 'eip155:' || "chain_id" OR ("chain_id" IS NULL AND "network" !~ '^eip155:'));
ALTER TABLE "chain_transactions" ADD CONSTRAINT "chain_transactions_network_is_the_chains"
  CHECK ("network" = 'eip155:' || "chain_id" OR ("chain_id" IS NULL AND "network" !~ '^eip155:'));
ALTER TABLE "merchant_fees_in_flight" ADD CONSTRAINT "merchant_fees_in_flight_network_is_the_chains"
  CHECK ("network" = 'eip155:' || "chain_id" OR ("chain_id" IS NULL AND "network" !~ '^eip155:'));
