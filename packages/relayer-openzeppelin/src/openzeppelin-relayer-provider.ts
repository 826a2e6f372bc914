import {
  estimateSendingGas,
  IdempotencyConflictError,
  rowDigest,
  sendingGasLimit,
  type NetworkFee,
  type SendingNetworks,
  type SubmittedTransaction,
  type TransactionOutcome,
  type TransactionProvider,
  type TransactionRequest,
} from '@facilitator/evm-sending';
import { type TransactionPurpose } from '@facilitator/db';
import { ChainTransactionRepository, type ExternalTransaction, type Pool } from '@facilitator/db';
import { OpenZeppelinRelayerClient, type RelayerApiClientOptions } from './api/relayer-api-client';
import { ChainReader } from './chain-reader';
import { OPENZEPPELIN_RELAYER_PROVIDER } from './provider-name';
import { resolveRelayerProviderOptions, type OpenZeppelinRelayerProviderOptions, type ResolvedRelayerProviderOptions } from './provider-options';
import { RelayerReconciler } from './reconciliation';
import { RelayerBindings, resolveRelayerBindings, type RelayerBinding } from './relayer-bindings';
import { RelayerOutcomeWatcher } from './relayer-outcome-watcher';
import { RelayerStatusTracker } from './relayer-status-tracker';
import { givenUp, isSigned, RelayerSubmission } from './relayer-submission';
import { StatusWakeups } from './status-wakeups';
import { RelayerWebhookHandler } from './webhook-handler';

/**
 * The spec's external transaction provider, through OpenZeppelin Relayer: the relayer holds the keys (local
 * keystore, KMS, Vault, Turnkey, CDP…), picks nonces, signs, prices, replaces and broadcasts; we keep the
 * idempotency key and read outcomes from our own node.
 *
 * What is stored, and when (chain_transactions, provider "openzeppelin-relayer"): the (settlementId,
 * purpose) row before the relayer is asked anything; the time of each request before it is made; the
 * relayer's transaction id as soon as it answers, before anything is read about it; then its status, hashes
 * and nonce as they are reported; the mined version once our node has its receipt. A crash anywhere leaves
 * a row the next `submit` or `waitForOutcome`, in any process, finishes without a second transaction: a
 * request whose answer was lost is looked for in the relayer's list before anything is sent again
 * (RelayerReconciler).
 */
export class OpenZeppelinRelayerProvider implements TransactionProvider {
  private readonly options: ResolvedRelayerProviderOptions;
  private readonly store: ChainTransactionRepository;
  private readonly bindings: RelayerBindings;
  private readonly chain: ChainReader;
  private readonly wakeups = new StatusWakeups();
  private readonly submission: RelayerSubmission;
  private readonly watcher: RelayerOutcomeWatcher;

  /**
   * Reads each relayer's address from the relayer server (checking it is an EVM relayer that can send), then
   * builds the provider: for start-up.
   */
  static async connect(
    pool: Pool,
    api: RelayerApiClientOptions,
    relayers: ReadonlyArray<{ id: string; chainId: number }>,
    networks: SendingNetworks,
    options: OpenZeppelinRelayerProviderOptions = {},
  ): Promise<OpenZeppelinRelayerProvider> {
    const client = new OpenZeppelinRelayerClient(api);
    return new OpenZeppelinRelayerProvider(pool, client, await resolveRelayerBindings(client, relayers), networks, options);
  }

  constructor(
    pool: Pool,
    private readonly client: OpenZeppelinRelayerClient,
    bindings: readonly RelayerBinding[],
    networks: SendingNetworks,
    options: OpenZeppelinRelayerProviderOptions = {},
  ) {
    this.options = resolveRelayerProviderOptions(options, client.requestTimeoutMs);
    this.store = new ChainTransactionRepository(pool);
    this.bindings = new RelayerBindings(bindings);
    this.chain = new ChainReader(networks, this.options);
    const tracker = new RelayerStatusTracker(client, this.store);
    const reconciler = new RelayerReconciler(client, this.options);
    this.submission = new RelayerSubmission(this.store, client, this.chain, this.bindings, reconciler, tracker, this.wakeups, this.options);
    this.watcher = new RelayerOutcomeWatcher(this.store, this.chain, this.bindings, tracker, this.submission, this.wakeups, this.options);
  }

  /** The relayers this provider sends through, with their addresses: the worker prints them at start-up. */
  get relayers(): RelayerBinding[] {
    return this.bindings.all();
  }

  async submit(request: TransactionRequest): Promise<SubmittedTransaction> {
    this.chain.network(request.chainId);
    const existing = await this.store.external.findByKey(request.settlementId, request.purpose, OPENZEPPELIN_RELAYER_PROVIDER);
    if (existing) return this.resume(existing, request);
    const binding = this.bindings.get(request.chainId, request.from);
    const to = request.to.toLowerCase();
    const data = request.data.toLowerCase();
    // the same dry run as the local keys, from the relayer's address: what would revert is never handed over
    const estimate = await estimateSendingGas(this.chain.network(request.chainId), request.chainId, { from: binding.address, to, data });
    const gasLimit = sendingGasLimit(estimate, request, this.options.gasLimitMarginPercent);
    const fields = { settlementId: request.settlementId, purpose: request.purpose, chainId: request.chainId, from: binding.address, to, data, gasLimit };
    const row = await this.store.external.insert({ ...fields, provider: OPENZEPPELIN_RELAYER_PROVIDER, authenticator: this.client.rowAuthenticator(rowDigest(fields)) });
    // null: a concurrent submit (maybe in another process) stored this key first; its row is the one
    if (!row) return this.resume((await this.store.external.findByKey(request.settlementId, request.purpose, OPENZEPPELIN_RELAYER_PROVIDER))!, request);
    this.options.logger.info('transaction stored for the relayer', { id: row.id, settlementId: row.settlementId, purpose: row.purpose, relayerId: binding.id });
    await this.options.onPhase?.('stored', { id: row.id });
    return toSubmitted(await this.submission.ensureSigned(row));
  }

  /** Only a transaction the relayer has signed (a hash and a nonce): one it has not is finished by `submit`. */
  async find(settlementId: string, purpose: TransactionPurpose): Promise<SubmittedTransaction | null> {
    const row = await this.store.external.findByKey(settlementId, purpose, OPENZEPPELIN_RELAYER_PROVIDER);
    return row && isSigned(row) ? toSubmitted(row) : null;
  }

  /** Whether anything at all is stored for this key (whichever provider sends it): a row without a relayer id may still be on the relayer. */
  hasAny(settlementId: string, purpose: TransactionPurpose): Promise<boolean> {
    return this.store.existsForKey(settlementId, purpose);
  }

  waitForOutcome(transactionId: string, confirmations: number): Promise<TransactionOutcome> {
    return this.watcher.wait(transactionId, confirmations);
  }

  networkFee(chainId: number): Promise<NetworkFee> {
    return this.chain.networkFee(chainId);
  }

  /**
   * The handler of the relayer's signed notifications (its notification's `signing_key`): each verified
   * `transaction_update` wakes whoever waits for that transaction in this process. The worker mounts it.
   */
  webhookHandler(signingKey: string): RelayerWebhookHandler {
    return new RelayerWebhookHandler(signingKey, this.wakeups);
  }

  private async resume(row: ExternalTransaction, request: TransactionRequest): Promise<SubmittedTransaction> {
    // `from` may differ on purpose (a retry that picked another relayer): the stored transaction wins
    if (row.chainId !== request.chainId) throw new IdempotencyConflictError(row.settlementId, row.purpose, 'chainId');
    if (row.toAddress !== request.to.toLowerCase()) throw new IdempotencyConflictError(row.settlementId, row.purpose, 'to');
    if (row.data !== request.data.toLowerCase()) throw new IdempotencyConflictError(row.settlementId, row.purpose, 'data');
    if (row.status === 'replaced') throw givenUp(row);
    const gasBound = request.gasLimit ?? request.gasCap;
    if (gasBound !== undefined && BigInt(row.gasLimit) > gasBound) throw new IdempotencyConflictError(row.settlementId, row.purpose, 'gasLimit');
    return toSubmitted(await this.submission.ensureSigned(row, { to: request.to.toLowerCase(), data: request.data.toLowerCase() }));
  }
}

function toSubmitted(row: ExternalTransaction): SubmittedTransaction {
  const hashes = [...row.providerHashes];
  if (row.minedHash && !hashes.includes(row.minedHash)) hashes.push(row.minedHash);
  return { id: row.id, from: row.fromAddress, nonce: row.nonce!, hash: row.minedHash ?? hashes[hashes.length - 1], hashes };
}

