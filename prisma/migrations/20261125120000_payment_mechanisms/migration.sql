-- Payment mechanisms (issue 25; docs/plans/mechanism-seam.md, commit 4): every verification and settlement
-- says which mechanism carries its payment (`exact/eip3009` today; Permit2's `exact` and `upto` next), its
-- x402 scheme, the contract that records its nonce (`nonce_space`: the token for EIP-3009, Permit2 for
-- Permit2, whose nonces are shared by every token) and the mechanism's normalized payload, so settlement can
-- read a payment from its own row whatever carries it. The EIP-3009 columns (nonce, valid_after,
-- valid_before, signature, authorization_fingerprint) stay as a projection every mechanism fills.
--
-- mechanism and scheme default to EIP-3009's so rows written by an older process during a rolling deploy
-- are right; nonce_space and payload are filled by this process and, for older rows, below. Adding a column
-- with a constant default rewrites nothing on Postgres 11 and later.
ALTER TABLE "verifications"
  ADD COLUMN "mechanism" TEXT NOT NULL DEFAULT 'exact/eip3009',
  ADD COLUMN "scheme" TEXT NOT NULL DEFAULT 'exact',
  ADD COLUMN "nonce_space" TEXT,
  ADD COLUMN "payload" JSONB;
ALTER TABLE "settlements"
  ADD COLUMN "mechanism" TEXT NOT NULL DEFAULT 'exact/eip3009',
  ADD COLUMN "scheme" TEXT NOT NULL DEFAULT 'exact',
  ADD COLUMN "nonce_space" TEXT,
  ADD COLUMN "payload" JSONB;

-- An EIP-3009 nonce belongs to (token, payer). A verified row's payload is its authorization as the payer
-- signed it (a verified row's merchant is its recipient); a rejected one keeps no signature, so no payload,
-- and a row missing any field of its authorization gets none either (settlement then reads the columns,
-- as it did before, rather than a payload it cannot read).
UPDATE "verifications"
   SET "nonce_space" = "token_address",
       "payload" = CASE WHEN "status" = 'verified' AND "signature" IS NOT NULL AND "payer" IS NOT NULL AND "merchant" IS NOT NULL
                         AND "amount" IS NOT NULL AND "valid_after" IS NOT NULL AND "valid_before" IS NOT NULL AND "nonce" IS NOT NULL
                    THEN jsonb_build_object(
         'authorization', jsonb_build_object('from', "payer", 'to', "merchant", 'value', "amount",
           'validAfter', "valid_after", 'validBefore', "valid_before", 'nonce', "nonce"),
         'signature', "signature") END
 WHERE "nonce_space" IS NULL;

UPDATE "settlements" s
   SET "nonce_space" = s."token_address", "payload" = v."payload"
  FROM "verifications" v
 WHERE v."id" = s."verification_id" AND s."nonce_space" IS NULL;

-- the nonce's identity as readers will ask for it (the (chain, token, payer, nonce) indexes go once no
-- process reads by token)
CREATE INDEX "verifications_chain_id_nonce_space_payer_nonce_idx" ON "verifications" ("chain_id", "nonce_space", "payer", "nonce");
CREATE INDEX "settlements_chain_id_nonce_space_payer_nonce_idx" ON "settlements" ("chain_id", "nonce_space", "payer", "nonce");
