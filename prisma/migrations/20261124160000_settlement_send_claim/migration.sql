-- The moment the worker committed to sending something of a settlement (its fee transaction, or its
-- item of an executor batch). A settle request whose wait ends with nothing sent may stop the settlement
-- only while this is NULL, and the worker claims it in the same row, so the two can never both win:
-- a payment the resource server was told had failed is never settled later.
ALTER TABLE "settlements" ADD COLUMN "send_claimed_at" TIMESTAMPTZ(3);

-- Settlements in flight when this runs already sent, or stored to send, what their worker claimed without
-- this column: they count as claimed, so no settle request can stop them.
UPDATE "settlements" s SET "send_claimed_at" = now()
 WHERE s."state" NOT IN ('settled', 'failed')
   AND (EXISTS (SELECT 1 FROM "chain_transactions" t WHERE t."settlement_id" = s."id")
        OR EXISTS (SELECT 1 FROM "settlement_batch_items" i WHERE i."settlement_id" = s."id"));
