-- A merchant's settlements settled on someone else's transaction after ours was sent count toward its failure
-- pause (feeRevertsOfMerchant, read before each of its fees): they are found by network and time.
CREATE INDEX "settlement_foreign_executions_chain_id_created_at" ON "settlement_foreign_executions" ("chain_id", "created_at");
