-- An upto payment its merchant settled for 0 (issue 40, 7b): the 0 is the payment's outcome, so a later settle
-- of the same payment (the same chain, nonce space, payer and nonce) is refused rather than move its maximum.
CREATE TABLE "nothing_settled_payments" (
    "payment_key" TEXT NOT NULL,
    "chain_id" INTEGER NOT NULL,
    "merchant" TEXT NOT NULL,
    "verification_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "nothing_settled_payments_pkey" PRIMARY KEY ("payment_key")
);
