-- Transactions sent through an external provider (OpenZeppelin Relayer; docs/decisions.md "OpenZeppelin Relayer
-- as the transaction provider") are rows of chain_transactions like the local keys' ones, so that the unique
-- (settlement_id, purpose) holds across providers and every reader of the table (finality watch, payment
-- hashes, claims, unfinished counts) sees them. The provider, not us, picks their nonce: it stays null until
-- the provider reports it.
ALTER TABLE "chain_transactions" ALTER COLUMN "nonce" DROP NOT NULL;
ALTER TABLE "chain_transactions" ADD COLUMN "provider" TEXT NOT NULL DEFAULT 'local';
ALTER TABLE "chain_transactions" ADD COLUMN "provider_transaction_id" TEXT;
ALTER TABLE "chain_transactions" ADD COLUMN "provider_status" TEXT;
ALTER TABLE "chain_transactions" ADD COLUMN "provider_status_reason" TEXT;
ALTER TABLE "chain_transactions" ADD COLUMN "provider_hashes" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[];
ALTER TABLE "chain_transactions" ADD COLUMN "provider_requested_at" TIMESTAMPTZ(3);
-- the local keys' invariant: their nonce is allocated in the statement that stores the row
ALTER TABLE "chain_transactions" ADD CONSTRAINT "chain_transactions_local_nonce_check" CHECK ("provider" <> 'local' OR "nonce" IS NOT NULL);
-- one provider transaction belongs to at most one of our rows: crash reconciliation claims through it
CREATE UNIQUE INDEX "chain_transactions_provider_provider_transaction_id_key" ON "chain_transactions"("provider", "provider_transaction_id");
