-- Retention walks the oldest bindings first (docs/decisions.md, "Payment identifiers"): a binding whose
-- payment never got a settlement is deleted with the verifications that could have started one.
CREATE INDEX "payment_identifiers_created_at_idx" ON "payment_identifiers" ("created_at");
