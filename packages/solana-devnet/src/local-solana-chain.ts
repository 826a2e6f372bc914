import { address, getBase58Decoder, getTransactionDecoder, lamports as toLamports } from '@solana/kit';
import { FailedTransactionMetadata, LiteSVM, type TransactionMetadata } from 'litesvm';
import { RpcError, startJsonRpcServer, type JsonRpcServer } from './json-rpc-server';
import type { AccountWrite, LandedTransaction, SimulationResult, TokenBalance } from './chain-records';
import type { RpcChain } from './rpc-chain';
import { rpcMethods } from './rpc-methods';
import { SlotClock, type Commitment } from './slot-clock';
import { readMint, readTokenAccount, uiTokenAmount } from './token-accounts';
import { describeTransactionError, transactionErrorJson } from './transaction-errors';
import { isEmptySignature, parseWireTransaction, transactionFee, type WireTransaction } from './wire-transaction';

export interface LocalSolanaChainOptions {
  host?: string;
  /** 0 (the default) picks a free port. */
  port?: number;
  /** A new slot (and blockhash) this often; 0 stops the clock (slots then move only by advanceSlots). Default 400 ms, like mainnet. */
  slotTimeMs?: number;
  /** Slots a blockhash stays valid for (mainnet: 150). */
  blockhashMaxAgeSlots?: number;
  /** Slots after its own before a landed transaction reads `confirmed` (0: at once). Default 1. */
  confirmedAfterSlots?: number;
  /** Slots after its own before a landed transaction reads `finalized` (mainnet: about 32). Default 4, to keep tests quick. */
  finalizedAfterSlots?: number;
}

const base58 = getBase58Decoder();
const transactionDecoder = getTransactionDecoder();

/**
 * A Solana chain in this process: LiteSVM (real SPL Token, Token-2022, ATA, Memo and compute budget programs)
 * behind an HTTP JSON-RPC server (rpc-methods.ts), with slots that advance on a timer (slot-clock.ts). What
 * LiteSVM does not keep, the chain keeps beside it: which transactions landed and in which slot (their status
 * then follows the slot), their metadata for getTransaction, and the preflight/skip-preflight rules of a node's
 * sendTransaction. Account reads see the latest (processed) state whatever commitment is asked.
 */
export class LocalSolanaChain implements RpcChain {
  readonly svm: LiteSVM;
  readonly blockhashMaxAgeSlots: number;
  readonly confirmedAfterSlots: number;
  readonly finalizedAfterSlots: number;
  /** How often each JSON-RPC method was called (tests read it to see what a client uses). */
  readonly rpcCalls = new Map<string, number>();
  private readonly clock: SlotClock;
  private readonly landed = new Map<string, LandedTransaction>();
  private readonly decimalsCache = new Map<string, number>();
  private sendsToDrop = 0;
  private transactionCount = 0n;
  private timer: NodeJS.Timeout | undefined;
  private server: JsonRpcServer | undefined;

  private constructor(options: LocalSolanaChainOptions) {
    this.svm = new LiteSVM().withBlockhashCheck(false).withTransactionHistory(0n);
    this.clock = new SlotClock(this.svm, options.blockhashMaxAgeSlots ?? 150, options.confirmedAfterSlots ?? 1, options.finalizedAfterSlots ?? 4);
    this.blockhashMaxAgeSlots = this.clock.blockhashMaxAgeSlots;
    this.confirmedAfterSlots = this.clock.confirmedAfterSlots;
    this.finalizedAfterSlots = this.clock.finalizedAfterSlots;
  }

  static async start(options: LocalSolanaChainOptions = {}): Promise<LocalSolanaChain> {
    const chain = new LocalSolanaChain(options);
    chain.server = await startJsonRpcServer(rpcMethods(chain), options.host ?? '127.0.0.1', options.port ?? 0, (method) =>
      chain.rpcCalls.set(method, (chain.rpcCalls.get(method) ?? 0) + 1),
    );
    const slotTimeMs = options.slotTimeMs ?? 400;
    if (slotTimeMs > 0) {
      chain.timer = setInterval(() => chain.advanceSlots(1), slotTimeMs);
      chain.timer.unref();
    }
    return chain;
  }

  get rpcUrl(): string {
    if (!this.server) throw new Error('the chain is not serving');
    return this.server.url;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.server?.close();
    this.server = undefined;
  }

  // ---- slots and blockhashes (the SlotClock's) ----

  slot(commitment: Commitment = 'finalized'): bigint {
    return this.clock.slot(commitment);
  }

  blockHeight(commitment: Commitment = 'finalized'): bigint {
    return this.clock.slot(commitment);
  }

  epochInfo(commitment: Commitment = 'finalized') {
    return { ...this.clock.epochInfo(commitment), transactionCount: this.transactionCount };
  }

  advanceSlots(count: number): void {
    this.clock.advance(count);
  }

  latestBlockhash(commitment: Commitment = 'finalized'): { blockhash: string; lastValidBlockHeight: bigint } {
    return this.clock.latestBlockhash(commitment);
  }

  isBlockhashValid(blockhash: string): boolean {
    return this.clock.isBlockhashValid(blockhash);
  }

  // ---- accounts ----

  getAccount(addressText: string): { lamports: bigint; data: Uint8Array; owner: string; executable: boolean; space: bigint } | null {
    const account = this.svm.getAccount(address(addressText));
    if (!account.exists) return null;
    return { lamports: account.lamports, data: account.data as Uint8Array, owner: account.programAddress, executable: account.executable, space: account.space };
  }

  setAccount(account: AccountWrite): void {
    this.svm.setAccount({
      address: address(account.address),
      lamports: toLamports(account.lamports),
      data: account.data,
      programAddress: address(account.owner),
      executable: account.executable ?? false,
      space: BigInt(account.data.length),
    });
  }

  programAccounts(program: string) {
    return this.svm.getProgramAccounts(address(program)).map((account) => ({
      address: account.address as string,
      lamports: account.lamports,
      data: account.data as Uint8Array,
      owner: account.programAddress as string,
      executable: account.executable,
      space: account.space,
    }));
  }

  minimumBalanceForRentExemption(length: number): bigint {
    return this.svm.minimumBalanceForRentExemption(BigInt(length));
  }

  mintDecimals(mint: string): number | undefined {
    let decimals = this.decimalsCache.get(mint);
    if (decimals === undefined) {
      const account = this.getAccount(mint);
      decimals = account ? readMint(account.owner, account.data)?.decimals : undefined;
      if (decimals !== undefined) this.decimalsCache.set(mint, decimals);
    }
    return decimals;
  }

  /** Credits lamports (LiteSVM's airdrop), recorded as a landed transaction so its signature reads confirmed then finalized. */
  airdrop(recipient: string, amount: bigint): string {
    const result = this.svm.airdrop(address(recipient), toLamports(amount));
    if (!result || result instanceof FailedTransactionMetadata) {
      throw new RpcError(-32603, `airdrop failed: ${result ? describeTransactionError(transactionErrorJson(result.err())) : 'no result'}`);
    }
    const signature = base58.decode(result.signature());
    this.landed.set(signature, {
      signature,
      slot: this.clock.slot('processed'),
      blockTime: Math.floor(Date.now() / 1000),
      err: null,
      logs: result.logs(),
      unitsConsumed: result.computeUnitsConsumed(),
      fee: 0n,
      preBalances: [],
      postBalances: [],
      preTokenBalances: [],
      postTokenBalances: [],
      innerInstructions: [],
    });
    this.transactionCount += 1n;
    return signature;
  }

  // ---- transactions ----

  /** Test control: the next `count` sends return their signature as usual but never land (a transaction the network dropped). */
  dropNextSend(count = 1): void {
    this.sendsToDrop += count;
  }

  simulate(wire: Uint8Array, options: { sigVerify?: boolean; replaceRecentBlockhash?: boolean } = {}): SimulationResult & { replacementBlockhash?: { blockhash: string; lastValidBlockHeight: bigint } } {
    const tx = parseWire(wire);
    const fee = transactionFee(tx);
    if (!options.replaceRecentBlockhash && !this.isBlockhashValid(tx.recentBlockhash)) {
      return { err: 'BlockhashNotFound', logs: [], unitsConsumed: 0n, returnData: null, innerInstructions: [], postAccounts: new Map(), fee };
    }
    let result: ReturnType<LiteSVM['simulateTransaction']>;
    try {
      result = this.withSigverify(options.sigVerify ?? false, () => this.svm.simulateTransaction(decode(wire)));
    } catch {
      // litesvm asserts every signature is present before verifying them
      return { err: 'SignatureFailure', logs: [], unitsConsumed: 0n, returnData: null, innerInstructions: [], postAccounts: new Map(), fee };
    }
    const meta = result instanceof FailedTransactionMetadata ? result.meta() : result.meta();
    const postAccounts = new Map<string, { lamports: bigint; data: Uint8Array; owner: string; executable: boolean } | null>();
    if (!(result instanceof FailedTransactionMetadata)) {
      for (const account of result.postAccounts()) {
        postAccounts.set(account.address, { lamports: account.lamports, data: account.data as Uint8Array, owner: account.programAddress, executable: account.executable });
      }
    }
    const returned = meta.returnData();
    const returnData = returned.data().length > 0 ? { programId: base58.decode(returned.programId()), data: [Buffer.from(returned.data()).toString('base64'), 'base64'] as [string, 'base64'] } : null;
    return {
      err: result instanceof FailedTransactionMetadata ? transactionErrorJson(result.err()) : null,
      logs: meta.logs(),
      unitsConsumed: meta.computeUnitsConsumed(),
      returnData,
      innerInstructions: innerInstructions(meta),
      postAccounts,
      fee,
      ...(options.replaceRecentBlockhash ? { replacementBlockhash: this.latestBlockhash('processed') } : {}),
    };
  }

  /**
   * Like a node's sendTransaction: with preflight, a transaction that would fail is refused with the
   * simulation's error and logs (-32002) and never lands; without it, the signature comes back and the
   * transaction lands (maybe failed, having paid its fee) or, if it could not be processed at all (expired
   * blockhash, no funds for the fee, already processed), it is silently dropped.
   */
  send(wire: Uint8Array, options: { skipPreflight?: boolean } = {}): string {
    const tx = parseWire(wire);
    const signature = tx.signatures[0];
    if (tx.signatures.some(isEmptySignature)) throw signatureFailure();
    if (!options.skipPreflight) {
      const simulation = this.landed.has(signature) ? { ...emptySimulation(), err: 'AlreadyProcessed' as const } : this.simulate(wire, { sigVerify: true });
      if (simulation.err !== null) {
        if (simulation.err === 'SignatureFailure') throw signatureFailure();
        throw new RpcError(-32002, `Transaction simulation failed: ${describeTransactionError(simulation.err)}`, {
          accounts: null,
          err: simulation.err,
          innerInstructions: null,
          logs: simulation.logs,
          replacementBlockhash: null,
          returnData: simulation.returnData,
          unitsConsumed: simulation.unitsConsumed,
        });
      }
    }
    if (this.sendsToDrop > 0) {
      this.sendsToDrop -= 1;
      return signature;
    }
    if (this.landed.has(signature) || !this.isBlockhashValid(tx.recentBlockhash)) return signature;
    this.execute(tx, wire);
    return signature;
  }

  private execute(tx: WireTransaction, wire: Uint8Array): void {
    const keys = tx.accountKeys;
    const preBalances = keys.map((key) => this.getAccount(key)?.lamports ?? 0n);
    const preTokenBalances = this.tokenBalances(keys);
    let result: TransactionMetadata | FailedTransactionMetadata;
    try {
      result = this.withSigverify(true, () => this.svm.sendTransaction(decode(wire)));
    } catch {
      throw signatureFailure();
    }
    const postBalances = keys.map((key) => this.getAccount(key)?.lamports ?? 0n);
    const failed = result instanceof FailedTransactionMetadata;
    const err = result instanceof FailedTransactionMetadata ? transactionErrorJson(result.err()) : null;
    if (err === 'SignatureFailure') throw signatureFailure();
    // a transaction lands when its fee is charged; one refused before that (no fee funds, ...) leaves no trace
    if (failed && postBalances[0] === preBalances[0]) return;
    const meta = result instanceof FailedTransactionMetadata ? result.meta() : result;
    const signature = tx.signatures[0];
    this.landed.set(signature, {
      signature,
      slot: this.clock.slot('processed'),
      blockTime: Math.floor(Date.now() / 1000),
      tx,
      err,
      logs: meta.logs(),
      unitsConsumed: meta.computeUnitsConsumed(),
      fee: transactionFee(tx),
      preBalances,
      postBalances,
      preTokenBalances,
      postTokenBalances: this.tokenBalances(keys),
      innerInstructions: innerInstructions(meta),
    });
    this.transactionCount += 1n;
  }

  private tokenBalances(keys: string[]): TokenBalance[] {
    const balances: TokenBalance[] = [];
    keys.forEach((key, accountIndex) => {
      const account = this.getAccount(key);
      const token = account && readTokenAccount(account.owner, account.data);
      if (!account || !token) return;
      const decimals = this.mintDecimals(token.mint) ?? 0;
      balances.push({ accountIndex, mint: token.mint, owner: token.owner, programId: account.owner, uiTokenAmount: uiTokenAmount(token.amount, decimals) });
    });
    return balances;
  }

  private withSigverify<T>(sigverify: boolean, run: () => T): T {
    this.svm.withSigverify(sigverify);
    try {
      return run();
    } finally {
      this.svm.withSigverify(true);
    }
  }

  /** A landed transaction's status, or null if it never landed (dropped, unknown). */
  signatureStatus(signature: string) {
    const record = this.landed.get(signature);
    if (!record) return null;
    const { confirmationStatus, confirmations } = this.clock.confirmation(record.slot);
    return {
      slot: record.slot,
      confirmations,
      err: record.err,
      status: record.err === null ? { Ok: null } : { Err: record.err },
      confirmationStatus,
    };
  }

  /** A landed transaction once it has reached `commitment` (getTransaction serves confirmed and finalized only). */
  landedTransaction(signature: string, commitment: Commitment = 'finalized'): LandedTransaction | null {
    const status = this.signatureStatus(signature);
    if (!status) return null;
    const reached = status.confirmationStatus === 'finalized' || (commitment !== 'finalized' && status.confirmationStatus === 'confirmed') || commitment === 'processed';
    return reached ? this.landed.get(signature)! : null;
  }
}

// a transaction must fit one IPv6 packet's payload (the node refuses larger ones before anything else)
const MAX_TRANSACTION_BYTES = 1232;

function parseWire(wire: Uint8Array): WireTransaction {
  if (wire.length > MAX_TRANSACTION_BYTES) {
    throw new RpcError(-32602, `VersionedTransaction too large: ${wire.length} bytes (max: encoded/raw ${Math.ceil(MAX_TRANSACTION_BYTES / 3) * 4}/${MAX_TRANSACTION_BYTES})`);
  }
  try {
    return parseWireTransaction(wire);
  } catch (error) {
    throw new RpcError(-32602, `invalid transaction: failed to deserialize: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function decode(wire: Uint8Array) {
  return transactionDecoder.decode(wire);
}

function signatureFailure(): RpcError {
  return new RpcError(-32003, 'Transaction signature verification failure');
}

function emptySimulation(): SimulationResult {
  return { err: null, logs: [], unitsConsumed: 0n, returnData: null, innerInstructions: [], postAccounts: new Map(), fee: 0n };
}

function innerInstructions(meta: TransactionMetadata): LandedTransaction['innerInstructions'] {
  return meta
    .innerInstructions()
    .map((list, index) => ({
      index,
      instructions: list.map((inner) => {
        const instruction = inner.instruction();
        return { programIdIndex: instruction.programIdIndex(), accounts: [...instruction.accounts()], data: instruction.data(), stackHeight: inner.stackHeight() };
      }),
    }))
    .filter((entry) => entry.instructions.length > 0);
}
