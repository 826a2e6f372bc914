import { randomUUID } from 'node:crypto';
import { keccak256, Wallet, type JsonRpcProvider, type TransactionRequest as EthersTransactionRequest } from 'ethers';
import type { EvmTransactionResponse, RelayerResponse, RelayerSpeed, RelayerTransactionStatus } from '../api/relayer-api-types';

/** A transaction as this local relayer keeps it: the API's fields plus every hash it signed. */
export interface LocalRelayerTransaction extends EvmTransactionResponse {
  hashes: string[];
}

/** A validated send request (the relayer's EvmTransactionRequest, numbers as bigint). */
export interface LocalSendRequest {
  to: string | null;
  value: bigint;
  data: string | null;
  gas_limit: bigint | null;
  speed: RelayerSpeed | null;
  gas_price: bigint | null;
  max_fee_per_gas: bigint | null;
  max_priority_fee_per_gas: bigint | null;
}

/** The local relayer's knobs for tests (shared by every relayer of one server). */
export interface LocalRelayerFaultState {
  /** new transactions wait here before being signed */
  gate: Promise<void>;
  /** how many upcoming transactions fail before signing, and why */
  failBeforeSigning: number;
  failBeforeSigningReason: string;
}

/** A refusal the API answers with 400, as the relayer's request validation does. */
export class LocalBadRequest extends Error {}

const REVERTED = 'Transaction reverted on-chain (receipt status: failed)';

/**
 * One EVM relayer, behaving as OpenZeppelin Relayer's does at its API: it stores a transaction as `pending`
 * and answers, then (in the background, one transaction at a time so its nonces stay in order) gives it
 * its own next nonce, signs it with its own key (`sent`), hands it to the node (`submitted`), and follows
 * its receipt (`mined`, then `confirmed` after the configured confirmations, or `failed` when it reverted).
 */
export class LocalRelayer {
  readonly address: string;
  private readonly wallet: Wallet;
  private readonly transactions: LocalRelayerTransaction[] = [];
  private nextNonce: number | undefined;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    readonly id: string,
    privateKey: string,
    private readonly rpc: JsonRpcProvider,
    private readonly chainId: number,
    private readonly network: string,
    private readonly faults: LocalRelayerFaultState,
    private readonly changed: (tx: LocalRelayerTransaction) => void,
  ) {
    this.wallet = new Wallet(privateKey);
    this.address = this.wallet.address.toLowerCase();
  }

  describe(): RelayerResponse {
    return { id: this.id, name: `local ${this.id}`, network: this.network, network_type: 'evm', paused: false, address: this.address, system_disabled: false };
  }

  /** Newest first, as the relayer lists them. */
  list(): LocalRelayerTransaction[] {
    return [...this.transactions].reverse();
  }

  get(id: string): LocalRelayerTransaction | undefined {
    return this.transactions.find((tx) => tx.id === id);
  }

  /** Stores the request as `pending` and queues its signing; returns at once, as the API answers before signing. */
  create(request: LocalSendRequest): LocalRelayerTransaction {
    const tx: LocalRelayerTransaction = {
      id: randomUUID(),
      hash: null,
      status: 'pending',
      status_reason: null,
      created_at: new Date().toISOString(),
      sent_at: null,
      confirmed_at: null,
      gas_price: request.gas_price?.toString() ?? null,
      gas_limit: request.gas_limit === null ? null : Number(request.gas_limit),
      nonce: null,
      value: request.value.toString(),
      from: this.address,
      to: request.to?.toLowerCase() ?? null,
      relayer_id: this.id,
      data: request.data ?? '0x',
      max_fee_per_gas: request.max_fee_per_gas?.toString() ?? null,
      max_priority_fee_per_gas: request.max_priority_fee_per_gas?.toString() ?? null,
      speed: request.speed,
      is_canceled: false,
      hashes: [],
    };
    this.transactions.push(tx);
    this.queue = this.queue.then(() => this.prepare(tx, request)).catch((error: unknown) => this.update(tx, { status: 'failed', status_reason: String(error) }));
    return tx;
  }

  /** Follows the receipts of what it handed to the node; called by the server's status loop. */
  async checkStatuses(confirmations: number): Promise<void> {
    const watching = this.transactions.filter((tx) => (tx.status === 'submitted' || tx.status === 'mined') && tx.hash);
    if (watching.length === 0) return;
    const head = Number(BigInt((await this.rpc.send('eth_blockNumber', [])) as string));
    for (const tx of watching) {
      const receipt = (await this.rpc.send('eth_getTransactionReceipt', [tx.hash])) as { status: string; blockNumber: string | null } | null;
      if (!receipt || receipt.blockNumber === null) continue;
      if (BigInt(receipt.status) === 0n) this.update(tx, { status: 'failed', status_reason: REVERTED });
      else if (head - Number(BigInt(receipt.blockNumber)) + 1 >= confirmations) this.update(tx, { status: 'confirmed', confirmed_at: new Date().toISOString() });
      else this.update(tx, { status: 'mined' });
    }
  }

  /** Resolves once every queued transaction was signed and handed over (or failed). */
  idle(): Promise<void> {
    return this.queue;
  }

  private async prepare(tx: LocalRelayerTransaction, request: LocalSendRequest): Promise<void> {
    await this.faults.gate;
    if (this.faults.failBeforeSigning > 0) {
      this.faults.failBeforeSigning--;
      this.update(tx, { status: 'failed', status_reason: this.faults.failBeforeSigningReason });
      return;
    }
    const nonce = this.nextNonce ?? (await this.rpc.getTransactionCount(this.address, 'pending'));
    this.nextNonce = nonce + 1;
    const unsigned: EthersTransactionRequest = {
      chainId: this.chainId,
      nonce,
      to: request.to,
      data: request.data ?? '0x',
      value: request.value,
      gasLimit: request.gas_limit ?? (await this.estimate(request)),
      ...(await this.pricing(request)),
    };
    const raw = await this.wallet.signTransaction(unsigned);
    const hash = keccak256(raw);
    this.update(tx, {
      status: 'sent',
      nonce,
      hash,
      hashes: [...tx.hashes, hash],
      gas_limit: Number(unsigned.gasLimit),
      sent_at: new Date().toISOString(),
      max_fee_per_gas: unsigned.maxFeePerGas?.toString() ?? tx.max_fee_per_gas,
      max_priority_fee_per_gas: unsigned.maxPriorityFeePerGas?.toString() ?? tx.max_priority_fee_per_gas,
    });
    try {
      await this.rpc.send('eth_sendRawTransaction', [raw]);
      this.update(tx, { status: 'submitted' });
    } catch (error) {
      // the node refused it: that nonce is free again
      this.nextNonce = undefined;
      this.update(tx, { status: 'failed', status_reason: `submission failed: ${(error as Error).message}` });
    }
  }

  /** The relayer's own estimate, falling back to its default for other calls (200,000), as the real one does. */
  private async estimate(request: LocalSendRequest): Promise<bigint> {
    try {
      return BigInt((await this.rpc.send('eth_estimateGas', [{ from: this.address, to: request.to, data: request.data ?? '0x' }])) as string);
    } catch {
      return 200_000n;
    }
  }

  private async pricing(request: LocalSendRequest): Promise<Pick<EthersTransactionRequest, 'type' | 'gasPrice' | 'maxFeePerGas' | 'maxPriorityFeePerGas'>> {
    if (request.gas_price !== null) return { type: 0, gasPrice: request.gas_price };
    if (request.max_fee_per_gas !== null) return { type: 2, maxFeePerGas: request.max_fee_per_gas, maxPriorityFeePerGas: request.max_priority_fee_per_gas! };
    const [block, tip] = await Promise.all([
      this.rpc.send('eth_getBlockByNumber', ['latest', false]) as Promise<{ baseFeePerGas?: string }>,
      this.rpc.send('eth_maxPriorityFeePerGas', []) as Promise<string>,
    ]);
    const priority = BigInt(tip);
    return { type: 2, maxFeePerGas: BigInt(block.baseFeePerGas ?? '0x0') * 2n + priority, maxPriorityFeePerGas: priority };
  }

  private update(tx: LocalRelayerTransaction, fields: Partial<LocalRelayerTransaction> & { status?: RelayerTransactionStatus }): void {
    const before = tx.status;
    Object.assign(tx, fields);
    if (fields.status !== undefined && fields.status !== before) this.changed(tx);
  }
}
