-- The moment the worker committed to sending something of a settlement (its fee transaction, or its
-- item of an executor batch). A settle request whose wait ends with nothing sent may stop the settlement
-- only while this is NULL, and the worker claims it in the same row, so the two can never both win:
-- a payment the resource server was told had failed is never settled later.
ALTER TABLE "settlements" ADD COLUMN "send_claimed_at" TIMESTAMPTZ(3);
