-- A local key's transaction row carries its key's signature over what may be signed for it (issue 40): a row a
-- database writer inserted or changed is never signed. Null on rows stored before, and on external providers' rows.
ALTER TABLE "chain_transactions" ADD COLUMN "authenticator" TEXT;
