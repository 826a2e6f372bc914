-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateEnum
CREATE TYPE "VerificationStatus" AS ENUM ('verified', 'rejected');

-- CreateEnum
CREATE TYPE "SettlementState" AS ENUM ('pending', 'check_allowance', 'collect_fee', 'fee_collected', 'executing', 'settled', 'failed');

-- CreateEnum
CREATE TYPE "ChainTransactionStatus" AS ENUM ('signed', 'broadcast', 'confirmed', 'reverted', 'replaced');

-- CreateEnum
CREATE TYPE "WebhookDeliveryStatus" AS ENUM ('pending', 'delivered', 'failed');

-- CreateEnum
CREATE TYPE "IdempotencyStatus" AS ENUM ('in_flight', 'completed');

-- CreateTable
CREATE TABLE "verifications" (
    "id" TEXT NOT NULL,
    "status" "VerificationStatus" NOT NULL,
    "protocol_version" INTEGER NOT NULL,
    "surface" TEXT NOT NULL,
    "chain_id" INTEGER NOT NULL,
    "network" TEXT NOT NULL,
    "token_address" TEXT,
    "payer" TEXT,
    "merchant" TEXT,
    "amount" TEXT,
    "expected_amount" TEXT,
    "nonce" TEXT,
    "valid_after" TEXT,
    "valid_before" TEXT,
    "signature" TEXT,
    "request" JSONB NOT NULL,
    "metadata" JSONB,
    "webhook_url" TEXT,
    "failure_message" TEXT,
    "failure_details" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "verifications_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "settlements" (
    "id" TEXT NOT NULL,
    "verification_id" TEXT NOT NULL,
    "payment_key" TEXT,
    "surface" TEXT NOT NULL,
    "state" "SettlementState" NOT NULL DEFAULT 'pending',
    "chain_id" INTEGER NOT NULL,
    "token_address" TEXT NOT NULL,
    "payer" TEXT NOT NULL,
    "merchant" TEXT NOT NULL,
    "amount" TEXT NOT NULL,
    "nonce" TEXT NOT NULL,
    "fee_amount" TEXT NOT NULL,
    "fee_tx_hash" TEXT,
    "fee_collected_at" TIMESTAMPTZ(3),
    "settlement_tx_hash" TEXT,
    "settled_at" TIMESTAMPTZ(3),
    "merchant_paid" BOOLEAN NOT NULL DEFAULT false,
    "error_code" TEXT,
    "error_message" TEXT,
    "error_details" JSONB,
    "metadata" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "settlements_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "settlement_transitions" (
    "id" BIGSERIAL NOT NULL,
    "settlement_id" TEXT NOT NULL,
    "from_state" "SettlementState",
    "to_state" "SettlementState" NOT NULL,
    "note" JSONB,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "settlement_transitions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "signer_nonces" (
    "chain_id" INTEGER NOT NULL,
    "address" TEXT NOT NULL,
    "next_nonce" BIGINT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "signer_nonces_pkey" PRIMARY KEY ("chain_id","address")
);

-- CreateTable
CREATE TABLE "chain_transactions" (
    "id" TEXT NOT NULL,
    "settlement_id" TEXT NOT NULL,
    "purpose" TEXT NOT NULL,
    "chain_id" INTEGER NOT NULL,
    "from_address" TEXT NOT NULL,
    "to_address" TEXT NOT NULL,
    "data" TEXT NOT NULL,
    "nonce" BIGINT NOT NULL,
    "gas_limit" TEXT NOT NULL,
    "status" "ChainTransactionStatus" NOT NULL DEFAULT 'signed',
    "mined_hash" TEXT,
    "block_number" BIGINT,
    "revert_reason" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "chain_transactions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "chain_transaction_attempts" (
    "hash" TEXT NOT NULL,
    "transaction_id" TEXT NOT NULL,
    "raw_transaction" TEXT NOT NULL,
    "max_fee_per_gas" TEXT NOT NULL,
    "max_priority_fee_per_gas" TEXT NOT NULL,
    "broadcast_at" TIMESTAMPTZ(3),
    "last_error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "chain_transaction_attempts_pkey" PRIMARY KEY ("hash")
);

-- CreateTable
CREATE TABLE "webhook_events" (
    "id" TEXT NOT NULL,
    "event_type" TEXT NOT NULL,
    "verification_id" TEXT,
    "settlement_id" TEXT,
    "url" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "status" "WebhookDeliveryStatus" NOT NULL DEFAULT 'pending',
    "attempt_count" INTEGER NOT NULL DEFAULT 0,
    "delivered_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "webhook_events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_attempts" (
    "id" BIGSERIAL NOT NULL,
    "event_id" TEXT NOT NULL,
    "number" INTEGER NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "status_code" INTEGER,
    "error" TEXT,
    "duration_ms" INTEGER NOT NULL,

    CONSTRAINT "webhook_attempts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "idempotency_keys" (
    "scope" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "request_hash" TEXT NOT NULL,
    "status" "IdempotencyStatus" NOT NULL,
    "response_status" INTEGER,
    "response_body" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY ("scope","key")
);

-- CreateIndex
CREATE INDEX "verifications_chain_id_token_address_payer_nonce_idx" ON "verifications"("chain_id", "token_address", "payer", "nonce");

-- CreateIndex
CREATE UNIQUE INDEX "settlements_payment_key_key" ON "settlements"("payment_key");

-- CreateIndex
CREATE INDEX "settlements_verification_id_idx" ON "settlements"("verification_id");

-- CreateIndex
CREATE INDEX "settlements_chain_id_token_address_payer_nonce_idx" ON "settlements"("chain_id", "token_address", "payer", "nonce");

-- CreateIndex
CREATE INDEX "settlement_transitions_settlement_id_at_idx" ON "settlement_transitions"("settlement_id", "at");

-- CreateIndex
CREATE UNIQUE INDEX "chain_transactions_settlement_id_purpose_key" ON "chain_transactions"("settlement_id", "purpose");

-- CreateIndex
CREATE UNIQUE INDEX "chain_transactions_chain_id_from_address_nonce_key" ON "chain_transactions"("chain_id", "from_address", "nonce");

-- CreateIndex
CREATE INDEX "chain_transaction_attempts_transaction_id_idx" ON "chain_transaction_attempts"("transaction_id");

-- CreateIndex
CREATE INDEX "webhook_events_verification_id_idx" ON "webhook_events"("verification_id");

-- CreateIndex
CREATE INDEX "webhook_events_settlement_id_idx" ON "webhook_events"("settlement_id");

-- CreateIndex
CREATE INDEX "webhook_attempts_event_id_idx" ON "webhook_attempts"("event_id");

-- CreateIndex
CREATE INDEX "idempotency_keys_expires_at_idx" ON "idempotency_keys"("expires_at");

-- AddForeignKey
ALTER TABLE "settlements" ADD CONSTRAINT "settlements_verification_id_fkey" FOREIGN KEY ("verification_id") REFERENCES "verifications"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "settlement_transitions" ADD CONSTRAINT "settlement_transitions_settlement_id_fkey" FOREIGN KEY ("settlement_id") REFERENCES "settlements"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "chain_transactions" ADD CONSTRAINT "chain_transactions_settlement_id_fkey" FOREIGN KEY ("settlement_id") REFERENCES "settlements"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "chain_transaction_attempts" ADD CONSTRAINT "chain_transaction_attempts_transaction_id_fkey" FOREIGN KEY ("transaction_id") REFERENCES "chain_transactions"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_events" ADD CONSTRAINT "webhook_events_verification_id_fkey" FOREIGN KEY ("verification_id") REFERENCES "verifications"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_events" ADD CONSTRAINT "webhook_events_settlement_id_fkey" FOREIGN KEY ("settlement_id") REFERENCES "settlements"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_event_id_fkey" FOREIGN KEY ("event_id") REFERENCES "webhook_events"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
