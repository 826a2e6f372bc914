-- Settlements that wait for the chain (issue 15, docs/decisions.md): gas above the cap, no relayer with gas.
ALTER TABLE "settlements" ADD COLUMN "waiting_reason" TEXT;
ALTER TABLE "settlements" ADD COLUMN "waiting_since" TIMESTAMPTZ(3);
ALTER TABLE "settlements" ADD COLUMN "waiting_detail" JSONB;
