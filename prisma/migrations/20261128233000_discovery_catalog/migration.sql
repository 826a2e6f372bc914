-- Issue 45: the x402 `bazaar` discovery catalog. A declaration that came with a settle request waits in
-- discovery_declarations until its settlement is final; only a settled payment lists (or records the rejection
-- of) a resource, for the payTo it paid, in discovery_resources; discovery_payers keeps one row per payer of a
-- resource, so every figure ranking uses counts a payer once. Owner: DiscoveryRepository.
CREATE TABLE "discovery_declarations" (
    "settlement_id" TEXT NOT NULL,
    "merchant" TEXT NOT NULL,
    "payer" TEXT NOT NULL,
    "network" TEXT NOT NULL,
    "resource_key" TEXT NOT NULL,
    "resource_url" TEXT NOT NULL,
    "outcome" TEXT NOT NULL,
    "rejected_reason" TEXT,
    "rejected_field" TEXT,
    "listing" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "claimed_at" TIMESTAMPTZ(3),
    CONSTRAINT "discovery_declarations_pkey" PRIMARY KEY ("settlement_id")
);
CREATE INDEX "discovery_declarations_created_at_idx" ON "discovery_declarations"("created_at");

CREATE TABLE "discovery_resources" (
    "id" BIGSERIAL NOT NULL,
    "merchant" TEXT NOT NULL,
    "resource_key" TEXT NOT NULL,
    "resource_url" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "listing" JSONB,
    "schemes" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "networks" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "extension_keys" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "search" TSVECTOR,
    "rejected_reason" TEXT,
    "rejected_field" TEXT,
    "rejected_at" TIMESTAMPTZ(3),
    "payments_settled" INTEGER NOT NULL DEFAULT 0,
    "settle_success_rate" DOUBLE PRECISION,
    "median_price" TEXT,
    "last_settled_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "discovery_resources_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "discovery_resources_merchant_resource_key_key" ON "discovery_resources"("merchant", "resource_key");
CREATE INDEX "discovery_resources_rank_idx" ON "discovery_resources"("payments_settled" DESC, "last_settled_at" DESC, "id") WHERE "listing" IS NOT NULL;
CREATE INDEX "discovery_resources_last_settled_at_idx" ON "discovery_resources"("last_settled_at");
CREATE INDEX "discovery_resources_search_idx" ON "discovery_resources" USING GIN ("search");

CREATE TABLE "discovery_payers" (
    "resource_id" BIGINT NOT NULL,
    "payer" TEXT NOT NULL,
    "settled" INTEGER NOT NULL DEFAULT 0,
    "failed" INTEGER NOT NULL DEFAULT 0,
    "last_amount" NUMERIC(78, 0),
    "last_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "discovery_payers_pkey" PRIMARY KEY ("resource_id", "payer"),
    CONSTRAINT "discovery_payers_resource_id_fkey" FOREIGN KEY ("resource_id") REFERENCES "discovery_resources"("id") ON DELETE CASCADE
);
CREATE INDEX "discovery_payers_last_at_idx" ON "discovery_payers"("last_at");
