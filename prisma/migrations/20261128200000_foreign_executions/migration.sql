-- A settlement settled by a transaction that is not its own (someone else executed the payer's authorization: a
-- front-run, the payer's wallet sending it twice, a merchant failing over between facilitators; or a batch of an
-- earlier attempt): the finality watcher watches that transaction's block here, as it watches ours in
-- chain_transactions, until it is FINALITY_DEPTH deep (docs/decisions.md, "Paid by another transaction").
CREATE TABLE "settlement_foreign_executions" (
    "settlement_id" TEXT NOT NULL,
    "chain_id" INTEGER NOT NULL,
    "tx_hash" TEXT NOT NULL,
    "block_number" BIGINT NOT NULL,
    "block_hash" TEXT NOT NULL,
    "final_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "settlement_foreign_executions_pkey" PRIMARY KEY ("settlement_id"),
    CONSTRAINT "settlement_foreign_executions_settlement_id_fkey" FOREIGN KEY ("settlement_id") REFERENCES "settlements"("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- the watcher reads the ones not final yet, per network
CREATE INDEX "settlement_foreign_executions_watched" ON "settlement_foreign_executions" ("chain_id") WHERE "final_at" IS NULL;
