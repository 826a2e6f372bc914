-- ERC-6492 wallet deployments our relayers pay for, one row per settlement that may deploy one: counted
-- per merchant and per factory within a window (WALLET_DEPLOYS_PER_MERCHANT / _PER_FACTORY) before any is sent.
CREATE TABLE "wallet_deployments" (
    "settlement_id" TEXT NOT NULL,
    "chain_id" INTEGER NOT NULL,
    "merchant" TEXT NOT NULL,
    "factory" TEXT NOT NULL,
    "wallet" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "wallet_deployments_pkey" PRIMARY KEY ("settlement_id")
);

CREATE INDEX "wallet_deployments_chain_id_merchant_created_at_idx" ON "wallet_deployments"("chain_id", "merchant", "created_at");
CREATE INDEX "wallet_deployments_chain_id_factory_created_at_idx" ON "wallet_deployments"("chain_id", "factory", "created_at");
