-- Chain resilience and smart-wallet payers (issue 15, docs/decisions.md "Chain resilience").
-- An ERC-6492 payer's wallet is deployed through its factory before the fee and the transfer.
ALTER TYPE "SettlementState" ADD VALUE IF NOT EXISTS 'deploying_wallet' AFTER 'pending';

-- A settlement that waits instead of acting (gas price above the cap, no funded relayer) says why and since when.
ALTER TABLE "settlements" ADD COLUMN "waiting_reason" TEXT;
ALTER TABLE "settlements" ADD COLUMN "waiting_since" TIMESTAMPTZ(3);
