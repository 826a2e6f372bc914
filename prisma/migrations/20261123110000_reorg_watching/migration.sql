-- Reorgs after settlement (issue 15, docs/decisions.md): settled transactions are watched until final.
ALTER TABLE "chain_transactions" ADD COLUMN "block_hash" TEXT;
ALTER TABLE "chain_transactions" ADD COLUMN "final_at" TIMESTAMPTZ(3);
ALTER TABLE "chain_transactions" ADD COLUMN "reorg_count" INTEGER NOT NULL DEFAULT 0;
CREATE INDEX "chain_transactions_awaiting_finality_idx" ON "chain_transactions"("chain_id") WHERE "final_at" IS NULL AND "status" IN ('confirmed', 'reverted');
ALTER TABLE "settlements" ADD COLUMN "finality" TEXT;
ALTER TABLE "settlements" ADD COLUMN "reorg_count" INTEGER NOT NULL DEFAULT 0;
-- what ended before this migration is long past any reorg: final, not a backlog for the watcher
UPDATE "chain_transactions" SET "final_at" = now() WHERE "status" IN ('confirmed', 'reverted');
UPDATE "settlements" SET "finality" = 'final' WHERE "state" IN ('settled', 'failed');
CREATE INDEX "settlements_finality_open_idx" ON "settlements"("id") WHERE "finality" IS NULL OR "finality" = 'reorged';
