-- Settlements charged no fee (upto amounts below the fee) are counted per merchant and in all over the last
-- hour before another is created (FEE_FREE_SETTLEMENTS_*): the treasury pays their gas and earns nothing.
CREATE INDEX "settlements_fee_free_created_at" ON "settlements" ("created_at") WHERE "fee_amount" = '0';
