-- The merchant's own page (issue 26, docs/decisions.md "The merchant page"): its sign-in sessions, and
-- indexes so that each of its reads is one merchant's rows, newest first, a page at a time.

-- A session is a random bearer token the page holds in memory; only its SHA-256 is stored. Signing out
-- deletes the row; an expired row is refused and deleted on the merchant's next sign-in or by expiry.
CREATE TABLE "merchant_sessions" (
    "token_hash" TEXT NOT NULL,
    "merchant" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "merchant_sessions_pkey" PRIMARY KEY ("token_hash")
);
CREATE INDEX "merchant_sessions_merchant_idx" ON "merchant_sessions"("merchant");
CREATE INDEX "merchant_sessions_expires_at_idx" ON "merchant_sessions"("expires_at");

-- a merchant's settlements, newest first, by keyset pages (created_at, id)
CREATE INDEX "settlements_merchant_created_at_id_idx" ON "settlements"("merchant", "created_at" DESC, "id" DESC);

-- a webhook event names its merchant (the payment's payTo, whose secret signs it), so that a merchant's
-- deliveries are read by an index rather than through every verification; older rows get it from theirs
ALTER TABLE "webhook_events" ADD COLUMN "merchant" TEXT;
UPDATE "webhook_events" e SET "merchant" = v."merchant" FROM "verifications" v WHERE v."id" = e."verification_id";
CREATE INDEX "webhook_events_merchant_created_at_id_idx" ON "webhook_events"("merchant", "created_at" DESC, "id" DESC);
