-- The nonce's identity moves from (chain, token, payer, nonce) to (chain, nonce_space, payer, nonce) (issue
-- 25; docs/plans/mechanism-seam.md, commit 7): every reader of a payment's identity (a verification's
-- used_by/held_by, the settle intake's lookup, our nonce use, fee reverts, the payment key) now asks by the
-- contract that records the nonce, so that a Permit2 nonce, shared by every token and both proxies, is one
-- identity whatever it pays.
--
-- A row written by a process older than 20261125120000 (a rolling deploy) carries no nonce_space; such a row
-- is EIP-3009's, whose nonce its token records. This trigger fills it on insert, so no reader by nonce_space
-- ever misses a payment of an older process: readers could not otherwise tell "no such payment" from
-- "written without its space". A row that names its space keeps it.
CREATE FUNCTION "nonce_space_of_token"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW."nonce_space" := COALESCE(NEW."nonce_space", NEW."token_address");
  RETURN NEW;
END $$;

CREATE TRIGGER "verifications_nonce_space" BEFORE INSERT ON "verifications"
  FOR EACH ROW EXECUTE FUNCTION "nonce_space_of_token"();
CREATE TRIGGER "settlements_nonce_space" BEFORE INSERT ON "settlements"
  FOR EACH ROW EXECUTE FUNCTION "nonce_space_of_token"();

-- rows an older process wrote between the previous migration and this one
UPDATE "verifications" SET "nonce_space" = "token_address" WHERE "nonce_space" IS NULL AND "token_address" IS NOT NULL;
UPDATE "settlements" SET "nonce_space" = "token_address" WHERE "nonce_space" IS NULL;

-- a settlement always has a token, hence a space (a verification refused before its network was known has neither)
ALTER TABLE "settlements" ALTER COLUMN "nonce_space" SET NOT NULL;
