-- Payment identifiers (docs/decisions.md, "Payment identifiers"): the x402 `payment-identifier` a client
-- gave a payment, bound to that payment's authorization fingerprint, per network and merchant (payTo), so
-- one merchant's ids never collide with another's. Bound once (INSERT ... ON CONFLICT DO NOTHING, then
-- read), never changed: the same id with another payment is refused.
-- The payment's (token, payer, nonce) are kept beside the fingerprint so that the lookup by payment
-- identifier reaches its settlements through their existing (chain_id, token_address, payer, nonce) index.
CREATE TABLE "payment_identifiers" (
    "chain_id" INTEGER NOT NULL,
    "payment_id" TEXT NOT NULL,
    "merchant" TEXT NOT NULL,
    "authorization_fingerprint" TEXT NOT NULL,
    "token_address" TEXT NOT NULL,
    "payer" TEXT NOT NULL,
    "nonce" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    -- payment_id before merchant: the public lookup asks by (network, payment_id) alone
    CONSTRAINT "payment_identifiers_pkey" PRIMARY KEY ("chain_id", "payment_id", "merchant")
);

-- The public lookup by (network, transaction): one index scan, only over settlements that have sent one.
CREATE INDEX "settlements_chain_id_settlement_tx_hash_idx" ON "settlements" ("chain_id", "settlement_tx_hash")
  WHERE "settlement_tx_hash" IS NOT NULL;
