-- Retention of what strangers can make us store (issue 22, docs/decisions.md "Retention"): the last time a
-- merchant signed a request of its own (a merchant nobody has seen for RETENTION_UNUSED_MERCHANTS_DAYS,
-- with nothing it asked for, loses its row and webhook secrets), and indexes so that each retention run
-- reads only what it may delete.

-- AlterTable
ALTER TABLE "merchants" ADD COLUMN "last_seen_at" TIMESTAMPTZ(3);

-- failed settlements that moved no money (no fee collected, merchant not paid), oldest first: the ones
-- deleted RETENTION_FAILED_SETTLEMENTS_DAYS after they failed; the rest are kept like settled ones
CREATE INDEX "settlements_failed_unpaid_updated_at_idx" ON "settlements"("updated_at")
  WHERE "state" = 'failed' AND "fee_collected_at" IS NULL AND "merchant_paid" = false;

-- rotated webhook secrets by the time they stop signing (deleted after it)
CREATE INDEX "merchant_webhook_secrets_retires_at_idx" ON "merchant_webhook_secrets"("retires_at")
  WHERE "retires_at" IS NOT NULL;
