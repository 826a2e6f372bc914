-- Issue 40, item 1 (review): what a database writer stores is not signed or charged unless the worker can tell
-- it is genuine. `settlements.admission` is the worker's seal over a payment whose pre-flight it ran itself (the
-- sequential fee is sent only when it verifies); `webhook_events.mac` is an HMAC keyed from WEBHOOK_SECRET over
-- the event, computed by whoever stored it (an event without a valid one is not signed or delivered).
ALTER TABLE "settlements" ADD COLUMN "admission" TEXT;
ALTER TABLE "webhook_events" ADD COLUMN "mac" TEXT;
