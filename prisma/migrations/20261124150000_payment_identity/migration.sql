-- Payment identity (docs/decisions.md, "Payment identity"): every verification and settlement carries the
-- fingerprint of the authorization it is about, so that a settle answer reports only the settlement of the
-- authorization it was given, never another one that shares its (payer, nonce).
-- The fingerprint is sha256("chainId:token:from:to:value:validAfter:validBefore:nonce"), lowercase, as
-- authorizationFingerprint (packages/core) computes it; old rows get it here from their own columns
-- (a verified verification's merchant is its authorization's recipient; a settlement's validity is its
-- verification's).
ALTER TABLE "verifications" ADD COLUMN "authorization_fingerprint" TEXT;
ALTER TABLE "settlements" ADD COLUMN "authorization_fingerprint" TEXT;

UPDATE "verifications"
   SET "authorization_fingerprint" = encode(sha256(convert_to(lower(concat_ws(':',
         "chain_id", "token_address", "payer", "merchant", "amount", "valid_after", "valid_before", "nonce")), 'UTF8')), 'hex')
 WHERE "status" = 'verified';

UPDATE "settlements" s
   SET "authorization_fingerprint" = encode(sha256(convert_to(lower(concat_ws(':',
         s."chain_id", s."token_address", s."payer", s."merchant", s."amount", v."valid_after", v."valid_before", s."nonce")), 'UTF8')), 'hex')
  FROM "verifications" v
 WHERE v."id" = s."verification_id";
