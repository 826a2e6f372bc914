import { ChainTransactionRepository, type Pool, type StoredTransaction, type TransactionPurpose } from '@facilitator/db';
import { IdempotencyConflictError } from './errors';
import { FeePolicy } from './fee-policy';
import { estimateSendingGas, sendingGasLimit } from './gas-estimate';
import { OutcomeWatcher } from './outcome-watcher';
import { resolveSendingOptions, type LocalKeyTransactionProviderOptions, type ResolvedSendingOptions } from './sending-options';
import type { Signer } from '@facilitator/signers';
import type { SendingNetworks } from './sending-nodes';
import { SignerKeyring, type SigningKey } from './signer-keyring';
import { TransactionDispatcher } from './transaction-dispatcher';
import { rowDigest } from './row-authenticator';
import type {
  NetworkFee,
  SubmittedTransaction,
  TransactionOutcome,
  TransactionProvider,
  TransactionRequest,
} from './transaction-provider';


/**
 * The transaction provider of the spec, with local private keys (the treasury and the relayers).
 *
 * State lives in Postgres only, so any number of processes can share the keys: nonces come from
 * `signer_nonces`, a nonce is stored on its (settlementId, purpose) row before anything is signed, and
 * every signed version is stored before it is broadcast. A process that dies at any point leaves a row
 * that the next `submit` or `waitForOutcome`, in any process, finishes with the same nonce.
 */
export class LocalKeyTransactionProvider implements TransactionProvider {
  private readonly options: ResolvedSendingOptions;
  private readonly keyring: SignerKeyring;
  private readonly store: ChainTransactionRepository;
  private readonly dispatcher: TransactionDispatcher;
  private readonly watcher: OutcomeWatcher;

  constructor(pool: Pool, networks: SendingNetworks, keys: readonly (Signer | SigningKey)[], options: LocalKeyTransactionProviderOptions = {}) {
    this.options = resolveSendingOptions(options);
    this.keyring = new SignerKeyring(keys);
    this.store = new ChainTransactionRepository(pool);
    const fallback = new FeePolicy(this.options.maxFeePerGasCap, this.options.feeBumpPercent);
    const policies = new Map(
      [...this.options.perNetwork].map(([chainId, o]) => [chainId, new FeePolicy(o.maxFeePerGasCap ?? this.options.maxFeePerGasCap, this.options.feeBumpPercent)]),
    );
    this.dispatcher = new TransactionDispatcher(this.store, this.keyring, networks, (chainId) => policies.get(chainId) ?? fallback, this.options);
    this.watcher = new OutcomeWatcher(this.store, this.dispatcher, this.options);
  }

  async submit(request: TransactionRequest): Promise<SubmittedTransaction> {
    const from = request.from.toLowerCase();
    if (!this.keyring.has(from)) throw new Error(`no signing key for ${request.from}`);
    this.dispatcher.network(request.chainId);
    const existing = await this.store.findByKey(request.settlementId, request.purpose);
    if (existing) return this.resume(existing, request);

    const { gasLimit, chainPendingNonce, fees } = await this.simulate({ ...request, from });
    const fields = { settlementId: request.settlementId, purpose: request.purpose, chainId: request.chainId, from, to: request.to.toLowerCase(), data: request.data.toLowerCase(), gasLimit };
    // the key signs what the row may be signed for (one more signature per transaction: tens of microseconds for
    // a local key, a round trip for a remote one), so that a row a crash leaves unsigned is later signed only
    // as stored here, never as a database writer rewrote or inserted it
    const authenticator = await this.keyring.signDigest(from, rowDigest(fields));
    const row = await this.store.allocateAndInsert({ ...fields, authenticator }, chainPendingNonce);
    // null: a concurrent submit (maybe in another process) stored this key first, and its nonce is the one
    if (!row) return this.resume((await this.store.findByKey(request.settlementId, request.purpose))!, request);
    this.options.logger.info('transaction nonce allocated', { id: row.id, settlementId: row.settlementId, purpose: row.purpose, from, nonce: row.nonce.toString() });
    await this.dispatcher.phase('nonce_allocated', row);
    const sent = await this.dispatcher.sendFirst(row, fees);
    this.options.logger.info('transaction broadcast', { id: sent.id, nonce: sent.nonce.toString(), hash: sent.attempts.at(-1)?.hash });
    return toSubmitted(sent);
  }

  networkFee(chainId: number): Promise<NetworkFee> {
    return this.dispatcher.networkFee(chainId);
  }

  /** Only transactions with a signed version: one a crash left unsigned was never sent, and `submit` finishes it. */
  async find(settlementId: string, purpose: TransactionPurpose): Promise<SubmittedTransaction | null> {
    const row = await this.store.findByKey(settlementId, purpose);
    return row && row.attempts.length > 0 ? toSubmitted(row) : null;
  }

  async hasAny(settlementId: string, purpose: TransactionPurpose): Promise<boolean> {
    // any provider's row: one an external provider sends is just as open
    return this.store.existsForKey(settlementId, purpose);
  }

  waitForOutcome(transactionId: string, confirmations: number): Promise<TransactionOutcome> {
    return this.watcher.wait(transactionId, confirmations);
  }

  private async resume(row: StoredTransaction, request: TransactionRequest): Promise<SubmittedTransaction> {
    // `from` may differ on purpose (a retry that picked another relayer): the stored transaction wins
    if (row.chainId !== request.chainId) throw new IdempotencyConflictError(row.settlementId, row.purpose, 'chainId');
    if (row.toAddress !== request.to.toLowerCase()) throw new IdempotencyConflictError(row.settlementId, row.purpose, 'to');
    if (row.data !== request.data.toLowerCase()) throw new IdempotencyConflictError(row.settlementId, row.purpose, 'data');
    // the row's gas limit is signed only within what the caller allows now (a stored row may have been rewritten)
    const gasBound = request.gasLimit ?? request.gasCap;
    if (gasBound !== undefined && BigInt(row.gasLimit) > gasBound) throw new IdempotencyConflictError(row.settlementId, row.purpose, 'gasLimit');
    // its target and calldata are the caller's own: it may be signed even without an authenticator (an older row)
    return toSubmitted(await this.dispatcher.ensureSent(row, { matchesCaller: true }));
  }

  /**
   * Dry-runs the transaction from the sending key before anything is allocated, and reads what signing
   * needs in the same round trip: the chain's pending nonce (to notice the key was used elsewhere) and fees.
   */
  private async simulate(request: TransactionRequest) {
    const provider = this.dispatcher.network(request.chainId);
    const [gas, chainPendingNonce, fees] = await Promise.all([
      estimateSendingGas(provider, request.chainId, request),
      this.dispatcher.rpc(request.chainId, (p) => p.getTransactionCount(request.from, 'pending')),
      this.dispatcher.marketFees(request.chainId),
    ]);
    const gasLimit = sendingGasLimit(gas, request, this.options.gasLimitMarginPercent);
    return { gasLimit, chainPendingNonce: BigInt(chainPendingNonce), fees };
  }
}

function toSubmitted(row: StoredTransaction): SubmittedTransaction {
  const hashes = row.attempts.map((attempt) => attempt.hash);
  return { id: row.id, from: row.fromAddress, nonce: row.nonce, hash: hashes[hashes.length - 1], hashes };
}

