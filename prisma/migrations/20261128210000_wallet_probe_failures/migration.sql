-- A deploy-then-transfer probe of an ERC-6492 wallet that failed (issue 40, 4) is kept as a row of its own kind:
-- it counts against the merchant's deployments and the wallet's failed probes within WALLET_DEPLOY_WINDOW_MS,
-- never against the factory's (a hostile wallet must not use up honest first-time payers' share of it).
ALTER TABLE "wallet_deployments" ADD COLUMN "probe_failed" BOOLEAN NOT NULL DEFAULT false;
CREATE INDEX "wallet_deployments_chain_id_wallet_created_at_idx" ON "wallet_deployments"("chain_id", "wallet", "created_at") WHERE "probe_failed";
