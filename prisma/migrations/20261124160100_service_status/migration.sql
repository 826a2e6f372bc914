-- The public status page (docs/decisions.md, "Status page"): verify latency is stored with each verification,
-- and the page's windowed aggregates (last 5 minutes, hour, day) read bounded ranges of indexes, not tables.

-- milliseconds from the start of a verify to its row being written (the checks and chain reads); null on
-- rows written before this column
ALTER TABLE "verifications" ADD COLUMN "verify_ms" INTEGER;

-- rows are appended in created_at order: a BRIN index bounds the window's scan for almost no write cost on
-- the hot path (a b-tree here would cost every verify an index insert)
CREATE INDEX "verifications_created_at_brin" ON "verifications" USING brin ("created_at");

-- settlements that settled in a window, with what their latency and network need (index-only scans)
CREATE INDEX "settlements_settled_at_idx" ON "settlements" ("settled_at") INCLUDE ("chain_id", "created_at") WHERE "settled_at" IS NOT NULL;

-- settlements that failed in a window: `failed` is final, so updated_at is when they failed
CREATE INDEX "settlements_failed_updated_at_idx" ON "settlements" ("updated_at") INCLUDE ("chain_id") WHERE "state" = 'failed';

-- settlements waiting now, by network and reason (few rows: only those waiting are in it)
CREATE INDEX "settlements_waiting_idx" ON "settlements" ("chain_id", "waiting_reason") INCLUDE ("waiting_since") WHERE "waiting_reason" IS NOT NULL;
