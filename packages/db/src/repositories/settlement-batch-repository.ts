import { IdPrefix, newId } from '@facilitator/core';
import type { Pool } from '../pg-pool';
import { inTransaction, runCount, runQuery, type Row } from './pg-query';
import { SettlementStore } from './settlements';

export interface NewSettlementBatch {
  chainId: number;
  /** lowercase: the relayer that sends it */
  relayer: string;
  /** lowercase: the treasury, whose delegated code runs it */
  to: string;
  data: string;
  gasCap: bigint;
  /** in calldata order */
  settlementIds: readonly string[];
}

export interface StoredSettlementBatch {
  id: string;
  chainId: number;
  relayer: string;
  to: string;
  data: string;
  gasCap: bigint;
  itemCount: number;
}

/**
 * Why a batch was not stored (nothing of it was): `ended` names the settlements already final (a settle
 * request stopped them before anything was sent); empty when one of them is in a batch already (another
 * run placed it: `alreadyBatched` says which).
 */
export interface BatchNotStored {
  stored: false;
  ended: string[];
}

/** Rolls the batch's transaction back when some of its settlements could not be claimed. */
class ItemsEnded extends Error {
  constructor(readonly settlementIds: string[]) {
    super(`settlements already final: ${settlementIds.join(', ')}`);
  }
}

const SQL = {
  // batch and items in one statement: a settlement already in a batch fails it whole (primary key)
  create: `
    WITH batch AS (
      INSERT INTO settlement_batches (id, chain_id, relayer, to_address, data, gas_cap, item_count)
      VALUES ($1, $2, $3, $4, $5, $6, cardinality($7::text[])) RETURNING id
    )
    INSERT INTO settlement_batch_items (settlement_id, batch_id, position)
    SELECT item.settlement_id, batch.id, item.position - 1
      FROM batch, unnest($7::text[]) WITH ORDINALITY AS item(settlement_id, position)`,
  ofSettlement: `
    SELECT b.* FROM settlement_batch_items i JOIN settlement_batches b ON b.id = i.batch_id WHERE i.settlement_id = $1`,
  alreadyBatched: `SELECT settlement_id FROM settlement_batch_items WHERE settlement_id = ANY($1::text[])`,
  settlementsOf: `SELECT settlement_id FROM settlement_batch_items WHERE batch_id = $1 ORDER BY position`,
  // retention: the items of failed settlements about to be deleted (the batch and its transaction stay:
  // they are our record of the gas spent)
  deleteItemsOfFailed: `
    DELETE FROM settlement_batch_items i USING settlements s
     WHERE i.settlement_id = ANY($1::text[]) AND s.id = i.settlement_id AND s.state = 'failed'`,
};

/**
 * Owner of `settlement_batches` and `settlement_batch_items`: which settlements share one executor
 * transaction. A batch is stored before its transaction exists, so a crash leaves a batch that any
 * of its settlements' next runs sends (idempotently) instead of a settlement nobody knows was sent.
 */
export class SettlementBatchRepository {
  constructor(private readonly pool: Pool) {}

  /**
   * Stores a batch with its items, each item's settlement claimed for sending. Not stored when one of the
   * settlements is final already, or in a batch already (another run placed it): see BatchNotStored.
   */
  async create(batch: NewSettlementBatch): Promise<StoredSettlementBatch | BatchNotStored> {
    const id = newId(IdPrefix.SettlementBatch);
    try {
      await inTransaction(this.pool, async (client) => {
        // each item's settlement is claimed for sending in the same transaction, so none that a settle
        // request stopped meanwhile is ever sent, and none stored here can be stopped any more
        const claimed = new Set(await SettlementStore.claimSendWith(client, batch.settlementIds));
        const ended = batch.settlementIds.filter((settlementId) => !claimed.has(settlementId));
        if (ended.length > 0) throw new ItemsEnded(ended);
        await runQuery(client, {
          name: 'settlementBatches.create',
          text: SQL.create,
          values: [id, batch.chainId, batch.relayer, batch.to, batch.data, batch.gasCap.toString(), batch.settlementIds],
        });
      });
    } catch (error) {
      if (error instanceof ItemsEnded) return { stored: false, ended: error.settlementIds };
      if ((error as { constraint?: string }).constraint === 'settlement_batch_items_pkey') return { stored: false, ended: [] };
      throw error;
    }
    return { id, chainId: batch.chainId, relayer: batch.relayer, to: batch.to, data: batch.data, gasCap: batch.gasCap, itemCount: batch.settlementIds.length };
  }

  async ofSettlement(settlementId: string): Promise<StoredSettlementBatch | null> {
    const rows = await runQuery(this.pool, { name: 'settlementBatches.ofSettlement', text: SQL.ofSettlement, values: [settlementId] });
    return rows[0] ? batchFromColumns(rows[0]) : null;
  }

  /** Which of these settlements are in a batch already. */
  async alreadyBatched(settlementIds: readonly string[]): Promise<Set<string>> {
    const rows = await runQuery(this.pool, { name: 'settlementBatches.alreadyBatched', text: SQL.alreadyBatched, values: [settlementIds] });
    return new Set(rows.map((r) => r.settlement_id as string));
  }

  /** Retention: removes the batch items of those of these settlements that failed; returns how many went. */
  async deleteItemsOfFailed(settlementIds: string[]): Promise<number> {
    if (settlementIds.length === 0) return 0;
    return runCount(this.pool, { name: 'settlementBatches.deleteItemsOfFailed', text: SQL.deleteItemsOfFailed, values: [settlementIds] });
  }

  async settlementsOf(batchId: string): Promise<string[]> {
    const rows = await runQuery(this.pool, { name: 'settlementBatches.settlementsOf', text: SQL.settlementsOf, values: [batchId] });
    return rows.map((r) => r.settlement_id as string);
  }
}

function batchFromColumns(r: Row): StoredSettlementBatch {
  return {
    id: r.id as string,
    chainId: r.chain_id as number,
    relayer: r.relayer as string,
    to: r.to_address as string,
    data: r.data as string,
    gasCap: BigInt(r.gas_cap as string),
    itemCount: r.item_count as number,
  };
}
