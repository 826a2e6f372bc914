-- Merchant identity without signup: the payTo address is the merchant. Its settle protection and own
-- minimum, its webhook secrets (encrypted at rest), and the nonces of its signed requests (single use).

-- CreateTable
CREATE TABLE "merchants" (
    "address" TEXT NOT NULL,
    "settle_key_hash" TEXT,
    "settle_key_created_at" TIMESTAMPTZ(3),
    "minimum_amount" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "merchants_pkey" PRIMARY KEY ("address")
);

-- CreateTable
CREATE TABLE "merchant_webhook_secrets" (
    "id" BIGSERIAL NOT NULL,
    "merchant" TEXT NOT NULL,
    "ciphertext" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "retires_at" TIMESTAMPTZ(3),

    CONSTRAINT "merchant_webhook_secrets_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "merchant_request_nonces" (
    "merchant" TEXT NOT NULL,
    "nonce" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "merchant_request_nonces_pkey" PRIMARY KEY ("merchant","nonce")
);

-- CreateIndex
CREATE UNIQUE INDEX "merchants_settle_key_hash_key" ON "merchants"("settle_key_hash");

-- CreateIndex
CREATE INDEX "merchant_webhook_secrets_merchant_created_at_idx" ON "merchant_webhook_secrets"("merchant", "created_at");

-- CreateIndex
CREATE INDEX "merchant_request_nonces_expires_at_idx" ON "merchant_request_nonces"("expires_at");

-- One current secret per merchant (Prisma's schema language has no partial unique index): the row
-- that concurrent "create on first use" inserts race for.
CREATE UNIQUE INDEX "merchant_webhook_secrets_current_key" ON "merchant_webhook_secrets"("merchant") WHERE "retires_at" IS NULL;

-- Merchant-scoped reads of deliveries filter events by merchant through their verification.
CREATE INDEX "verifications_merchant_idx" ON "verifications"("merchant");
