-- Who decided first whether a sequential x402 settlement's transfer is sent: the worker, just before signing it
-- ('send'), or the settle request whose answer could not wait any longer for it ('withheld': the request was
-- answered failed, so the transfer is never sent; the fee already claimed is kept). One conditional update each
-- on the settlement's row, so exactly one wins (docs/decisions/settlement.md, "An answered request's transfer
-- is never sent").
ALTER TABLE "settlements" ADD COLUMN "transfer_decision" TEXT;
ALTER TABLE "settlements" ADD CONSTRAINT "settlements_transfer_decision_check" CHECK ("transfer_decision" IN ('send', 'withheld'));
