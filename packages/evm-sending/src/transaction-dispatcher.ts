import { setTimeout as sleep } from 'node:timers/promises';
import type { ChainTransactionAttempt } from '@facilitator/db';
import { keccak256, Transaction } from 'ethers';
import { ChainTransactionRepository, FINAL_STATUSES, type NewAttempt, type StoredTransaction } from '@facilitator/db';
import { NonceConsumedError, RpcUnavailableError, TransactionRejectedError, UnauthenticatedTransactionError } from './errors';
import { isAuthentic } from './row-authenticator';
import { FeePolicy, type Fees, type MarketReading } from './fee-policy';
import type { NetworkFee } from './transaction-provider';
import { classifyNodeError, readMarket } from '@facilitator/evm-chain';
import { minedReceiptFromRpc, type MinedTransactionReceipt } from './mined-receipt';
import { replayRevertReason } from './revert-replay';
import { SharedReadings } from '@facilitator/core';
import type { ResolvedSendingOptions, SendPhase } from './sending-options';
import type { SignerKeyring } from './signer-keyring';
import { SendingNodes, type SendingNetworks } from './sending-nodes';
import { SyncSender } from './sync-sender';

export interface MinedReceipt {
  row: StoredTransaction;
  receipt: MinedTransactionReceipt;
}

/** How many times "nonce too low" must go unexplained by our receipts before we call the nonce lost. */
const NONCE_USED_CHECKS = 3;

/**
 * Signs, stores and broadcasts versions of stored transactions, and reads their fate from the node. Every
 * signed version is stored before it is broadcast, and every node answer goes through classifyNodeError.
 */
export class TransactionDispatcher extends SendingNodes {
  private readonly marketReadings = new SharedReadings<number, MarketReading>();
  private readonly headReadings = new SharedReadings<number, number>();
  readonly sync: SyncSender;

  constructor(
    private readonly store: ChainTransactionRepository,
    private readonly keyring: SignerKeyring,
    networks: SendingNetworks,
    private readonly feePolicies: (chainId: number) => FeePolicy,
    private readonly options: ResolvedSendingOptions,
  ) {
    super(networks);
    this.sync = new SyncSender(options);
  }

  /**
   * The market's fees. New transactions accept a reading up to `feeCacheMs` old, so concurrent submits share
   * one read (two RPC calls); a fee a little out of date is what replacement is for. Replacements read
   * afresh (`maxAgeMs` 0): the market moving is usually why they are made.
   */
  async marketFees(chainId: number, maxAgeMs = this.options.feeCacheMs): Promise<Fees> {
    return this.feePolicies(chainId).market(await this.marketReading(chainId, maxAgeMs));
  }

  /** The network's base fee against our cap: above it, nothing we sign can be included. */
  async networkFee(chainId: number): Promise<NetworkFee> {
    const policy = this.feePolicies(chainId);
    const reading = await this.marketReading(chainId, this.options.feeCacheMs);
    return { baseFeePerGas: reading.baseFeePerGas, maxFeePerGasCap: policy.maxFeePerGasCap, aboveCap: policy.isAboveCap(reading) };
  }

  private marketReading(chainId: number, maxAgeMs: number): Promise<MarketReading> {
    return this.marketReadings.get(chainId, maxAgeMs, () => this.rpc(chainId, (provider) => readMarket(provider)));
  }

  /**
   * The chain's latest block number, shared by every waiting transaction: one `eth_blockNumber` per half
   * poll interval per chain, however many transactions are in flight.
   */
  headBlock(chainId: number): Promise<number> {
    return this.headReadings.get(chainId, this.options.receiptPollIntervalMs / 2, () =>
      this.rpc(chainId, async (provider) => Number(BigInt((await provider.send('eth_blockNumber', [])) as string))),
    );
  }

  /** Signs and stores the first version (unless one is stored already), then broadcasts it. */
  async sendFirst(row: StoredTransaction, fees: Fees): Promise<StoredTransaction> {
    const attempt = await this.store.storeFirstAttempt(row, () => this.sign(row, fees));
    await this.phase('attempt_stored', row, attempt.hash);
    await this.broadcast(row, attempt, { mayBump: true });
    await this.phase('broadcast', row, attempt.hash);
    return this.store.getById(row.id);
  }

  /**
   * Finishes whatever a previous run left undone: signs a transaction that has no signed version, or
   * hands the newest version to the node again ("already known" when it has it, "nonce too low" when
   * it was mined, which sends us to the receipts). A row without a signed version is signed only when its
   * caller compared it with the request it derives itself (`matchesCaller`), or its authenticator is its
   * key's signature over it: a row a database writer inserted or rewrote is refused, nothing signed.
   */
  async ensureSent(row: StoredTransaction, { matchesCaller = false } = {}): Promise<StoredTransaction> {
    if (FINAL_STATUSES.has(row.status)) return row;
    if (row.attempts.length === 0) {
      if (!matchesCaller && !isAuthentic(authenticatedFieldsOf(row), row.authenticator)) {
        this.options.logger.error('stored transaction refused: its authenticator is not its key\'s signature over it, nothing signed', {
          id: row.id, settlementId: row.settlementId, purpose: row.purpose, from: row.fromAddress, to: row.toAddress, nonce: row.nonce.toString(),
        });
        throw new UnauthenticatedTransactionError(row.id);
      }
      return this.sendFirst(row, await this.marketFees(row.chainId));
    }
    await this.broadcast(row, latest(row), { mayBump: true });
    return this.store.getById(row.id);
  }

  /** Signs a version with the same nonce and higher fees, stores it, then broadcasts it. False when the fee cap forbids a bump. */
  async replace(row: StoredTransaction, why: string): Promise<boolean> {
    const previous = latest(row);
    const policy = this.feePolicies(row.chainId);
    const fees = policy.bump(feesOf(previous), await this.marketFees(row.chainId, 0));
    const log = { id: row.id, from: row.fromAddress, nonce: row.nonce.toString(), why };
    if (!fees) {
      this.options.logger.warn('transaction not replaced: the fee cap leaves no room for a bump', { ...log, cap: policy.maxFeePerGasCap.toString() });
      return false;
    }
    // the replacement repeats the signed version, not the row: a row rewritten since is not what the key signs
    const attempt = await this.store.addAttempt(row.id, await this.sign(signedFieldsOf(row, previous), fees));
    this.options.logger.warn('replacing transaction with higher fees', {
      ...log,
      replaces: previous.hash,
      hash: attempt.hash,
      maxFeePerGas: fees.maxFeePerGas.toString(),
    });
    await this.broadcast({ ...row, attempts: [...row.attempts, attempt] }, attempt, { mayBump: false });
    return true;
  }

  /** The receipt of whichever of our versions was mined, if one was. */
  /**
   * `trustArrived`: a receipt a synchronous send brought may be used (for one confirmation); with more, the
   * chain is asked, since a preconfirmation can still be dropped before its block is final.
   */
  async findMined(row: StoredTransaction, trustArrived = true): Promise<MinedReceipt | null> {
    const arrived = trustArrived ? this.sync.receiptOf(row.attempts.map((a) => a.hash)) : undefined;
    if (arrived) return { row, receipt: arrived };
    // issued in one tick, so ethers sends them as one JSON-RPC batch
    const receipts = await this.rpc(row.chainId, (provider) =>
      Promise.all(row.attempts.map(async (a) => minedReceiptFromRpc(await provider.send('eth_getTransactionReceipt', [a.hash])))),
    );
    const receipt = receipts.find((r) => r !== null);
    return receipt ? { row, receipt } : null;
  }

  /**
   * Why a mined transaction reverted: replays it as a call on the state after its block, which reproduces
   * reverts caused by earlier transactions of the same block. Undefined when the replay does not revert.
   */
  revertReason(row: StoredTransaction, receipt: MinedTransactionReceipt): Promise<string | undefined> {
    const call = { from: row.fromAddress, to: row.toAddress, data: row.data, gasLimit: BigInt(row.gasLimit) };
    return replayRevertReason(this.network(row.chainId), row.chainId, call, receipt);
  }

  /**
   * Broadcasts the unfinished transactions of the same key with lower nonces: a lower nonce that a crash
   * left unsigned, or that the node dropped, holds every later transaction of the key in the node's queue.
   * Returns how many there were.
   */
  async sendLowerNonces(row: StoredTransaction): Promise<number> {
    const mined = BigInt(await this.rpc(row.chainId, (provider) => provider.getTransactionCount(row.fromAddress, 'latest')));
    if (mined >= row.nonce) return 0;
    const lower = await this.store.findUnfinishedBetween(row.chainId, row.fromAddress, mined, row.nonce);
    if (BigInt(lower.length) < row.nonce - mined) {
      const ours = new Set(lower.map((r) => r.nonce));
      const missing: string[] = [];
      for (let n = mined; n < row.nonce && missing.length < 10; n++) if (!ours.has(n)) missing.push(n.toString());
      this.options.logger.warn('nonces below a stuck transaction are not unfinished transactions of ours', {
        id: row.id, from: row.fromAddress, nonce: row.nonce.toString(), missing,
      });
    }
    if (lower.length > 0) {
      this.options.logger.warn('sending lower-nonce transactions that hold a stuck one', {
        id: row.id, from: row.fromAddress, nonce: row.nonce.toString(), lower: lower.map((r) => r.nonce.toString()),
      });
    }
    for (const gap of lower) {
      try {
        await this.ensureSent(gap);
      } catch (error) {
        if (error instanceof RpcUnavailableError) throw error;
        this.options.logger.warn('could not send a lower-nonce transaction', { id: gap.id, nonce: gap.nonce.toString(), error: String(error) });
      }
    }
    return lower.length;
  }

  /**
   * Hands one signed version to the node and acts on the answer as NODE_ERROR_RULES says. Returns when the
   * node holds a version of the transaction or one was mined; throws a typed error otherwise.
   */
  private async broadcast(row: StoredTransaction, attempt: ChainTransactionAttempt, { mayBump }: { mayBump: boolean }): Promise<void> {
    try {
      await this.sync.send(row.chainId, this.network(row.chainId), attempt.rawTransaction, attempt.hash);
      await this.store.markBroadcast(row.id, attempt.hash);
      return;
    } catch (error) {
      const classified = classifyNodeError(error);
      const log = { id: row.id, hash: attempt.hash, nonce: row.nonce.toString(), category: classified.category, message: classified.message };
      switch (classified.action) {
        case 'treat_as_sent':
          await this.store.markBroadcast(row.id, attempt.hash);
          return;
        case 'keep_waiting':
          await this.store.recordAttemptError(attempt.hash, classified.message);
          await this.store.markBroadcast(row.id, null);
          return;
        case 'check_mined':
          await this.store.recordAttemptError(attempt.hash, classified.message);
          await this.resolveNonceUsed(row);
          await this.store.markBroadcast(row.id, null); // one of ours was mined, so it was broadcast, maybe by a crashed run
          return;
        case 'send_lower_nonces': {
          await this.store.recordAttemptError(attempt.hash, classified.message);
          if (mayBump && (await this.sendLowerNonces(row)) > 0) return this.broadcast(row, attempt, { mayBump: false });
          throw new TransactionRejectedError(classified.category, true, row.id, classified.message, { cause: error });
        }
        case 'bump_fee':
          await this.store.recordAttemptError(attempt.hash, classified.message);
          if (mayBump && (await this.replace(row, classified.message))) return;
          this.options.logger.warn('node refused the transaction fees', log);
          throw new TransactionRejectedError(classified.category, true, row.id, classified.message, { cause: error });
        default:
          await this.store.recordAttemptError(attempt.hash, classified.message);
          if (classified.category === 'rpc_unavailable') throw new RpcUnavailableError(row.chainId, classified.message, { cause: error });
          this.options.logger.error('node refused the transaction', log);
          throw new TransactionRejectedError(classified.category, classified.retryable, row.id, classified.message, { cause: error });
      }
    }
  }

  /**
   * The node says our nonce is used. One of our versions may have been mined (possibly one another process
   * signed), so look at the receipts of all of them, a few times in case the node's indexes lag its state.
   * Only when none was mined and the chain's nonce really passed ours is the nonce declared lost.
   */
  async resolveNonceUsed(row: StoredTransaction): Promise<MinedReceipt> {
    for (let check = 1; ; check++) {
      const fresh = await this.store.getById(row.id);
      const mined = await this.findMined(fresh);
      if (mined) return mined;
      if (check >= NONCE_USED_CHECKS) break;
      await sleep(this.options.receiptPollIntervalMs);
    }
    const chainNonce = BigInt(await this.rpc(row.chainId, (provider) => provider.getTransactionCount(row.fromAddress, 'latest')));
    if (chainNonce <= row.nonce) {
      // the node contradicts itself (a lagging replica behind a load balancer): try again later
      throw new TransactionRejectedError('nonce_too_low', true, row.id, `node said nonce too low, but the account nonce is ${chainNonce}`);
    }
    await this.store.markReplaced(row.id);
    this.options.logger.error('transaction nonce was used by a transaction that is not ours', {
      id: row.id, from: row.fromAddress, nonce: row.nonce.toString(), hashes: row.attempts.map((a) => a.hash),
    });
    throw new NonceConsumedError(row.id, row.fromAddress, row.nonce);
  }

  private async sign(row: SignedFields, fees: Fees): Promise<NewAttempt> {
    const rawTransaction = await this.keyring.signTransaction(row.fromAddress, {
      type: 2,
      chainId: row.chainId,
      nonce: Number(row.nonce),
      to: row.toAddress,
      data: row.data,
      value: 0n,
      gasLimit: BigInt(row.gasLimit),
      maxFeePerGas: fees.maxFeePerGas,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    });
    return { hash: keccak256(rawTransaction), rawTransaction, fees };
  }

  async phase(phase: SendPhase, row: StoredTransaction, hash?: string): Promise<void> {
    await this.options.onPhase?.(phase, { id: row.id, nonce: row.nonce, hash });
  }
}

/** What a transaction is signed with besides its fees. */
type SignedFields = Pick<StoredTransaction, 'chainId' | 'nonce' | 'fromAddress' | 'toAddress' | 'data' | 'gasLimit'>;

function authenticatedFieldsOf(row: StoredTransaction) {
  const { settlementId, purpose, chainId, fromAddress: from, toAddress: to, data } = row;
  return { settlementId, purpose, chainId, from, to, data, gasLimit: BigInt(row.gasLimit) };
}

/**
 * The fields of a version our key signed (its signature recovers to the row's sender): a replacement is the
 * same transaction with higher fees, whatever the row says now.
 */
function signedFieldsOf(row: StoredTransaction, attempt: ChainTransactionAttempt): SignedFields {
  const signed = Transaction.from(attempt.rawTransaction);
  if (signed.from?.toLowerCase() !== row.fromAddress || signed.chainId !== BigInt(row.chainId) || BigInt(signed.nonce) !== row.nonce || !signed.to) {
    throw new UnauthenticatedTransactionError(row.id);
  }
  return { chainId: row.chainId, nonce: row.nonce, fromAddress: row.fromAddress, toAddress: signed.to.toLowerCase(), data: signed.data, gasLimit: signed.gasLimit.toString() };
}

export function latest(row: StoredTransaction): ChainTransactionAttempt {
  const attempt = row.attempts[row.attempts.length - 1];
  if (!attempt) throw new Error(`chain transaction ${row.id} has no signed version`);
  return attempt;
}

function feesOf(attempt: ChainTransactionAttempt): Fees {
  return { maxFeePerGas: BigInt(attempt.maxFeePerGas), maxPriorityFeePerGas: BigInt(attempt.maxPriorityFeePerGas) };
}
