-- One-transaction settlement (issue 14, docs/decisions.md "Atomic settlement"): a settlement remembers which
-- path it took, and settlements that share one transaction are stored as a batch before it is sent.
ALTER TABLE "settlements" ADD COLUMN "settlement_mode" TEXT;

-- A chain transaction's idempotency key is now owned by a settlement or by a batch (id "bat_..."):
-- settlement_id keeps its name and no longer references settlements.
ALTER TABLE "chain_transactions" DROP CONSTRAINT "chain_transactions_settlement_id_fkey";

CREATE TABLE "settlement_batches" (
    "id" TEXT NOT NULL,
    "chain_id" INTEGER NOT NULL,
    "relayer" TEXT NOT NULL,
    "to_address" TEXT NOT NULL,
    "data" TEXT NOT NULL,
    "gas_cap" TEXT NOT NULL,
    "item_count" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "settlement_batches_pkey" PRIMARY KEY ("id")
);

-- one row per settlement: a settlement is in at most one batch, ever
CREATE TABLE "settlement_batch_items" (
    "settlement_id" TEXT NOT NULL,
    "batch_id" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    CONSTRAINT "settlement_batch_items_pkey" PRIMARY KEY ("settlement_id")
);
CREATE INDEX "settlement_batch_items_batch_id_idx" ON "settlement_batch_items"("batch_id");
ALTER TABLE "settlement_batch_items" ADD CONSTRAINT "settlement_batch_items_settlement_id_fkey" FOREIGN KEY ("settlement_id") REFERENCES "settlements"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "settlement_batch_items" ADD CONSTRAINT "settlement_batch_items_batch_id_fkey" FOREIGN KEY ("batch_id") REFERENCES "settlement_batches"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
