-- Abuse limits (docs/decisions.md, "Abuse").
-- A rejected verification keeps who, what and why, not the request body.
ALTER TABLE "verifications" ALTER COLUMN "request" DROP NOT NULL;

-- Retention deletes rejected verifications by age.
CREATE INDEX "verifications_status_created_at_idx" ON "verifications"("status", "created_at");

-- A settlement whose money state is unknown and whose job ran out of attempts waits for an operator.
ALTER TABLE "settlements" ADD COLUMN "attention_reason" TEXT;
ALTER TABLE "settlements" ADD COLUMN "attention_at" TIMESTAMPTZ(3);
CREATE INDEX "settlements_attention_at_idx" ON "settlements"("attention_at") WHERE "attention_at" IS NOT NULL;

-- Fee reservations (settlements of one merchant in collect_fee) and fee-revert counts are read per merchant.
CREATE INDEX "settlements_merchant_chain_id_state_idx" ON "settlements"("merchant", "chain_id", "state");
