import { IdPrefix, newId } from '@facilitator/core';
import type { ChainTransaction, ChainTransactionAttempt, PrismaClient } from '@facilitator/db';
import type { Fees } from './fee-policy';
import type { TransactionPurpose } from './transaction-provider';

/** A transaction with every signed version of it, oldest first. */
export type StoredTransaction = ChainTransaction & { attempts: ChainTransactionAttempt[] };

export interface NewTransaction {
  settlementId: string;
  purpose: TransactionPurpose;
  chainId: number;
  /** lowercase */
  from: string;
  /** lowercase */
  to: string;
  data: string;
  gasLimit: bigint;
}

export interface NewAttempt {
  hash: string;
  rawTransaction: string;
  fees: Fees;
}

export type MinedStatus = 'confirmed' | 'reverted';

/** Statuses after which nothing more is sent for a transaction. */
export const FINAL_STATUSES: ReadonlySet<string> = new Set(['confirmed', 'reverted', 'replaced']);

// Interactive transactions here are a few statements long, but many workers may queue on one key's
// nonce row and on a small pool: wait for a connection longer than Prisma's 2 s default.
const TRANSACTION_OPTIONS = { maxWait: 10_000, timeout: 10_000 };

/** Thrown inside the allocation transaction to roll the nonce back when another caller stored the key first. */
class KeyAlreadyStored extends Error {}

/**
 * Postgres access of the transaction provider. The invariants live here: a nonce is allocated in the same
 * database transaction that stores it on the (settlementId, purpose) row, so a nonce is never lost nor given
 * twice; the first signed version is stored under a row lock, so concurrent resumers agree on it.
 */
export class ChainTransactionStore {
  constructor(private readonly prisma: PrismaClient) {}

  findByKey(settlementId: string, purpose: TransactionPurpose): Promise<StoredTransaction | null> {
    return this.withSortedAttempts(
      this.prisma.chainTransaction.findUnique({ where: { settlementId_purpose: { settlementId, purpose } }, include: { attempts: true } }),
    );
  }

  findById(id: string): Promise<StoredTransaction | null> {
    return this.withSortedAttempts(this.prisma.chainTransaction.findUnique({ where: { id }, include: { attempts: true } }));
  }

  async getById(id: string): Promise<StoredTransaction> {
    const row = await this.findById(id);
    if (!row) throw new Error(`no chain transaction ${id}`);
    return row;
  }

  /**
   * Takes the key's next nonce from `signer_nonces` and stores the transaction with it, atomically. The
   * nonce moves forward to `chainPendingNonce` when the chain is ahead (the key was used elsewhere).
   * Returns null, with the nonce given back, when a transaction for (settlementId, purpose) already exists.
   */
  async allocateAndInsert(tx: NewTransaction, chainPendingNonce: bigint): Promise<StoredTransaction | null> {
    const id = newId(IdPrefix.ChainTransaction);
    try {
      await this.prisma.$transaction(async (db) => {
        await db.$executeRaw`
          INSERT INTO signer_nonces (chain_id, address, next_nonce, updated_at)
          VALUES (${tx.chainId}, ${tx.from}, ${chainPendingNonce}, now())
          ON CONFLICT (chain_id, address) DO NOTHING`;
        // The row lock taken here serializes allocation for this key across every process until commit.
        const [allocated] = await db.$queryRaw<Array<{ nonce: string }>>`
          UPDATE signer_nonces
             SET next_nonce = GREATEST(next_nonce, ${chainPendingNonce}) + 1, updated_at = now()
           WHERE chain_id = ${tx.chainId} AND address = ${tx.from}
          RETURNING (next_nonce - 1)::text AS nonce`;
        const inserted = await db.$queryRaw<Array<{ id: string }>>`
          INSERT INTO chain_transactions
            (id, settlement_id, purpose, chain_id, from_address, to_address, data, nonce, gas_limit, status, created_at, updated_at)
          VALUES
            (${id}, ${tx.settlementId}, ${tx.purpose}, ${tx.chainId}, ${tx.from}, ${tx.to}, ${tx.data},
             ${BigInt(allocated.nonce)}, ${tx.gasLimit.toString()}, 'signed', now(), now())
          ON CONFLICT (settlement_id, purpose) DO NOTHING
          RETURNING id`;
        if (inserted.length === 0) throw new KeyAlreadyStored();
      }, TRANSACTION_OPTIONS);
    } catch (error) {
      if (error instanceof KeyAlreadyStored) return null;
      throw error;
    }
    return this.getById(id);
  }

  /**
   * Stores the first signed version unless one exists, under a lock on the transaction's row: two
   * processes resuming the same transaction end up broadcasting the same signed bytes.
   */
  async storeFirstAttempt(transactionId: string, sign: () => Promise<NewAttempt>): Promise<ChainTransactionAttempt> {
    return this.prisma.$transaction(async (db) => {
      await db.$queryRaw`SELECT id FROM chain_transactions WHERE id = ${transactionId} FOR UPDATE`;
      const existing = sortAttempts(await db.chainTransactionAttempt.findMany({ where: { transactionId } }));
      if (existing.length > 0) return existing[existing.length - 1];
      const attempt = await sign();
      return db.chainTransactionAttempt.create({ data: attemptData(transactionId, attempt) });
    }, TRANSACTION_OPTIONS);
  }

  /** Stores a replacement (same nonce, higher fees). Idempotent on the hash: identical bytes are one attempt. */
  addAttempt(transactionId: string, attempt: NewAttempt): Promise<ChainTransactionAttempt> {
    return this.prisma.chainTransactionAttempt.upsert({
      where: { hash: attempt.hash },
      create: attemptData(transactionId, attempt),
      update: {},
    });
  }

  /** The node accepted `hash` (or holds another version with this nonce, when `hash` is null). */
  async markBroadcast(transactionId: string, hash: string | null): Promise<void> {
    await this.prisma.$transaction([
      ...(hash ? [this.prisma.chainTransactionAttempt.updateMany({ where: { hash, broadcastAt: null }, data: { broadcastAt: new Date(), lastError: null } })] : []),
      this.prisma.chainTransaction.updateMany({ where: { id: transactionId, status: 'signed' }, data: { status: 'broadcast' } }),
    ]);
  }

  async recordAttemptError(hash: string, message: string): Promise<void> {
    await this.prisma.chainTransactionAttempt.update({ where: { hash }, data: { lastError: message.slice(0, 1_000) } });
  }

  async recordMined(transactionId: string, mined: { status: MinedStatus; hash: string; blockNumber: number; revertReason?: string }): Promise<void> {
    await this.prisma.chainTransaction.update({
      where: { id: transactionId },
      data: { status: mined.status, minedHash: mined.hash, blockNumber: BigInt(mined.blockNumber), revertReason: mined.revertReason ?? null },
    });
  }

  async markReplaced(transactionId: string): Promise<void> {
    // never over a mined outcome another process recorded meanwhile
    await this.prisma.chainTransaction.updateMany({ where: { id: transactionId, status: { in: ['signed', 'broadcast'] } }, data: { status: 'replaced' } });
  }

  /** Unfinished transactions of one key with nonces in [fromNonce, belowNonce): the ones a nonce gap may hide in. */
  async findUnfinishedBetween(chainId: number, from: string, fromNonce: bigint, belowNonce: bigint): Promise<StoredTransaction[]> {
    const rows = await this.prisma.chainTransaction.findMany({
      where: { chainId, fromAddress: from, nonce: { gte: fromNonce, lt: belowNonce }, status: { in: ['signed', 'broadcast'] } },
      include: { attempts: true },
      orderBy: { nonce: 'asc' },
    });
    return rows.map((row) => ({ ...row, attempts: sortAttempts(row.attempts) }));
  }

  private async withSortedAttempts(query: Promise<StoredTransaction | null>): Promise<StoredTransaction | null> {
    const row = await query;
    return row && { ...row, attempts: sortAttempts(row.attempts) };
  }
}

function attemptData(transactionId: string, attempt: NewAttempt) {
  return {
    hash: attempt.hash,
    transactionId,
    rawTransaction: attempt.rawTransaction,
    maxFeePerGas: attempt.fees.maxFeePerGas.toString(),
    maxPriorityFeePerGas: attempt.fees.maxPriorityFeePerGas.toString(),
    createdAt: new Date(),
  };
}

/** Oldest first; fees break ties, since a replacement always pays more than what it replaces. */
function sortAttempts(attempts: ChainTransactionAttempt[]): ChainTransactionAttempt[] {
  return [...attempts].sort(
    (a, b) => a.createdAt.getTime() - b.createdAt.getTime() || compareBigInt(BigInt(a.maxFeePerGas), BigInt(b.maxFeePerGas)),
  );
}

function compareBigInt(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
