import { id, toQuantity, type JsonRpcProvider } from 'ethers';
import { FailoverJsonRpcProvider } from './rpc/failover-provider';
import { untrustedCall, UntrustedCallTimeoutError } from './rpc/untrusted-call';
import type { RpcCaller } from './rpc/rpc-endpoint-pool';
import { JsonRpcError } from './json-rpc-batch-client';
import { domainSeparator as eip712DomainSeparator, SharedReadings } from '@facilitator/core';
import { cappedFees, marketFees, readMarket, type Eip1559Fees, type MarketReading } from './market-fees';
import { classifyNodeError } from './node-error-classification';
import { decodeRevert } from './revert-reason';
import { fiatTokenInterface } from './token-abi';
import { addressWord, authorizationStateData, decodeUint, encodeCall, SELECTORS, TRANSFER_TOPIC, uintWord } from './token-calldata';
import { revertReasonOf } from './revert-reason';
import type { ChainLog, FoundLog, MinedTransaction } from './chain-log';

/** AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce), lowercase */
const AUTHORIZATION_USED_TOPIC = id('AuthorizationUsed(address,bytes32)');

/** How a simulation is run: as the real transaction would be sent (see UsdcClient.estimate). */
export interface SimulationOptions {
  /** the gas limit the real transaction would carry at most (its cap): more than this is `outOfGas` */
  gasLimit?: bigint;
  /**
   * the real transaction's fee fields are read from the market (as the sending provider signs them, capped
   * at this). Without fee fields geth-family nodes simulate with tx.gasprice 0, which a hostile wallet can
   * tell from a real transaction.
   */
  maxFeePerGasCap?: bigint;
}

/** A simulation's verdict: its gas, the revert reason, or that it needs more than the gas limit it was given. */
export type SimulationResult = { gas: bigint } | { revert: string; outOfGas?: bigint };

/** How long a reading of the market's fees is reused for simulations (as the sending provider's FEE_CACHE default). */
const SIMULATION_FEES_MAX_AGE_MS = 500;

/** What nodes say when a simulation runs out of the gas it was given (geth, anvil, reth, erigon, nethermind). */
const OUT_OF_GAS = /out of gas|gas required exceeds|outofgas|gas limit reached/i;

/**
 * How far back to look for the transaction that used an authorization, or executed any payment (about 5.5
 * hours of Base blocks).
 */
const AUTHORIZATION_LOOKBACK_BLOCKS = 10_000;

export interface AuthorizationUse {
  transactionHash: string;
  blockNumber: number;
  /** what the transaction moved from the payer to the merchant, if anything */
  paidToMerchant: bigint;
  /** the transaction's `to` (lowercase), when its receipt was found: our treasury's address means our own settlement executor */
  to?: string;
}

/**
 * Reads and calldata for the one token a network settles (Circle's FiatTokenV2_2): the one token reader,
 * for settlement (worker, CLI) and verification (RpcChainReader) alike.
 */
export class UsdcClient {
  private readonly marketReadings = new SharedReadings<'market', MarketReading>();
  /** eth_calls of the latest state on their way, by target, data and sender */
  private readonly readsUnderWay = new Map<string, Promise<string>>();

  /**
   * `calls` carries the token's `eth_call`s: by default ethers' `send` (its `call` formats and resolves the
   * request first, which costs more than the call; a revert still comes back as ethers' CALL_EXCEPTION);
   * verification's hot path passes its lean batching client instead.
   */
  constructor(
    readonly provider: JsonRpcProvider,
    readonly tokenAddress: string,
    private readonly calls: Pick<RpcCaller, 'call'> = { call: <T>(method: string, params: unknown[]) => provider.send(method, params) as Promise<T> },
  ) {}

  private call(data: string, from?: string): Promise<string> {
    return this.latestCall(this.tokenAddress, data, from);
  }

  /**
   * Identical reads of the latest state asked while one is on its way share it (issue 41, item 1): a merchant's
   * allowance and balance, or a payer's balance, read by each of its settlements that advance together, go to
   * the node once. Sharing an answer with a read already under way is what a read made a moment earlier would
   * have answered: nothing older than the read itself is ever given.
   */
  private latestCall(to: string, data: string, from?: string): Promise<string> {
    const key = `${to}|${data}|${from ?? ''}`;
    const underWay = this.readsUnderWay.get(key);
    if (underWay) return underWay;
    const read = this.calls.call<string>('eth_call', [{ ...(from ? { from } : {}), to, data }, 'latest']).finally(() => this.readsUnderWay.delete(key));
    this.readsUnderWay.set(key, read);
    return read;
  }

  /**
   * The token's EIP-712 domain on `chainId`: the pinned name and version (TOKEN_EIP712_*), each field not pinned
   * the token's own (asked only then).
   */
  async eip712Domain(chainId: number, pinned: { name?: string; version?: string } = {}): Promise<{ name: string; version: string; chainId: number; verifyingContract: string }> {
    const read = pinned.name !== undefined && pinned.version !== undefined ? undefined : await this.eip712NameAndVersion();
    return { name: pinned.name ?? read!.name, version: pinned.version ?? read!.version, chainId, verifyingContract: this.tokenAddress };
  }

  /**
   * Its domain separator (`eip712Domain`), for verification and the worker alike, read once (a failed read is not
   * kept: the next ask reads again).
   */
  domainSeparator(chainId: number, pinned: { name?: string; version?: string } = {}): Promise<Uint8Array> {
    if (!this.separator) {
      const separator = this.eip712Domain(chainId, pinned).then(eip712DomainSeparator);
      separator.catch(() => {
        if (this.separator === separator) this.separator = undefined;
      });
      this.separator = separator;
    }
    return this.separator;
  }

  private separator?: Promise<Uint8Array>;

  /** The token's EIP-712 domain name and version, as it answers them. */
  async eip712NameAndVersion(): Promise<{ name: string; version: string }> {
    const read = async (fn: 'name' | 'version') => fiatTokenInterface.decodeFunctionResult(fn, await this.call(fiatTokenInterface.encodeFunctionData(fn)))[0] as string;
    const [name, version] = await Promise.all([read('name'), read('version')]);
    return { name, version };
  }

  async allowance(owner: string, spender: string): Promise<bigint> {
    return decodeUint(await this.call(encodeCall(SELECTORS.allowance, [addressWord(owner), addressWord(spender)])));
  }

  async balanceOf(account: string): Promise<bigint> {
    return decodeUint(await this.call(encodeCall(SELECTORS.balanceOf, [addressWord(account)])));
  }

  async isAuthorizationUsed(authorizer: string, nonce: string): Promise<boolean> {
    return decodeUint(await this.call(authorizationStateData(authorizer, nonce))) !== 0n;
  }

  transferFromData(from: string, to: string, value: bigint): string {
    return encodeCall(SELECTORS.transferFrom, [addressWord(from), addressWord(to), uintWord(value)]);
  }

  /** Whether `account` has code: a contract wallet (or a delegated EOA), whose signatures the token checks by ERC-1271. */
  async hasCode(account: string): Promise<boolean> {
    const code = (await this.provider.send('eth_getCode', [account, 'latest'])) as string;
    return code !== '0x' && code !== '0x0' && code !== '';
  }

  /**
   * Estimates a call as `from` against the pending block: its gas, or the revert reason when it would
   * fail. Errors that are not reverts (the node is down) are thrown. `to` is the token unless given (a
   * payer wallet's factory, for its deployment).
   *
   * The estimate may run a stranger's code (a contract-wallet payer's ERC-1271 check, an ERC-6492 factory),
   * so it goes alone on the wire and is never held against the endpoint (untrustedCall); a slow one throws
   * UntrustedCallTimeoutError. With `options` it runs as the real transaction: with its fee fields and at most
   * its gas limit (a call that needs more answers `{ revert, outOfGas: gasLimit }`).
   */
  async estimate(from: string, data: string, to: string = this.tokenAddress, options: SimulationOptions = {}): Promise<SimulationResult> {
    const tx = await this.asTransaction({ from, to, data }, options);
    try {
      const gas = await this.sendUntrusted<string>('eth_estimateGas', [tx, 'pending']);
      return { gas: BigInt(gas) };
    } catch (err) {
      if (err instanceof UntrustedCallTimeoutError) throw err;
      const failure = simulationFailureOf(err, options.gasLimit);
      if (failure === undefined) throw err;
      return failure;
    }
  }

  /**
   * An `eth_call` of a stranger's code run as the real transaction would be (the ERC-6492 deploy-then-transfer
   * probe, a wallet factory's view): alone on the wire and never held against an endpoint (untrustedCall),
   * within `options.gasLimit` and with the market's fee fields (a node runs a call without them at
   * tx.gasprice 0, which the stranger's code can tell from a real transaction, and with its own gas cap, which
   * the code can burn). `to` absent: a deployless call of creation code. Resolves to what it returned; a
   * revert or out of gas is thrown as the node's answer, a slow one as UntrustedCallTimeoutError.
   */
  async callAsTransaction(call: { from: string; to?: string; data: string }, options: SimulationOptions = {}, block = 'pending'): Promise<string> {
    return this.sendUntrusted<string>('eth_call', [await this.asTransaction(call, options), block]);
  }

  /** The call's fields with the real transaction's gas limit and fee fields, where `options` asks for them. */
  private async asTransaction(call: { from: string; to?: string; data: string }, options: SimulationOptions): Promise<Record<string, string>> {
    const tx: Record<string, string> = { from: call.from, ...(call.to ? { to: call.to } : {}), data: call.data };
    if (options.gasLimit !== undefined) tx.gas = toQuantity(options.gasLimit);
    if (options.maxFeePerGasCap !== undefined) {
      const fees = await this.simulationFees(options.maxFeePerGasCap);
      Object.assign(tx, { maxFeePerGas: toQuantity(fees.maxFeePerGas), maxPriorityFeePerGas: toQuantity(fees.maxPriorityFeePerGas) });
    }
    return tx;
  }

  /** Through the endpoint pool's untrusted calls when there is one, else the provider's own send. */
  private sendUntrusted<T>(method: string, params: unknown[]): Promise<T> {
    const pool = this.provider instanceof FailoverJsonRpcProvider ? this.provider.pool : undefined;
    return pool ? untrustedCall<T>(pool, method, params) : (this.provider.send(method, params) as Promise<T>);
  }

  /**
   * The fee fields a transaction sent now would carry: twice the base fee plus the node's tip, capped at
   * `maxFeePerGasCap` as the sending provider caps them (uncapped when the cap is below the base fee, where
   * nothing is sent anyway and the simulation only needs a real gas price).
   */
  async simulationFees(maxFeePerGasCap: bigint): Promise<Eip1559Fees> {
    // shared by concurrent pre-flights for a moment: two RPC calls per settlement would be a lot for a reading
    const reading = await this.marketReadings.get('market', SIMULATION_FEES_MAX_AGE_MS, () => readMarket(this.provider));
    const market = cappedFees(marketFees(reading), maxFeePerGasCap);
    return market.maxFeePerGas >= reading.baseFeePerGas ? market : marketFees(reading);
  }

  /**
   * Dry-runs a call of the token as `from`; resolves to the revert reason, or undefined when it would
   * succeed. A transfer's dry run runs a contract-wallet payer's code: like `estimate`, alone and never
   * held against the endpoint.
   */
  async simulate(from: string, data: string): Promise<string | undefined> {
    const pool = this.provider instanceof FailoverJsonRpcProvider ? this.provider.pool : undefined;
    try {
      if (pool) await untrustedCall<string>(pool, 'eth_call', [{ from, to: this.tokenAddress, data }, 'latest']);
      else await this.call(data, from);
      return undefined;
    } catch (err) {
      if (err instanceof UntrustedCallTimeoutError) throw err;
      const failure = simulationFailureOf(err, undefined);
      if (failure === undefined || !('revert' in failure)) throw err;
      return failure.revert;
    }
  }

  /**
   * An eth_call of a contract besides the token (e.g. Permit2's nonce bitmap), at the latest block, through
   * the same calls as the token's reads.
   */
  readContract(to: string, data: string): Promise<string> {
    return this.latestCall(to, data);
  }

  /**
   * Logs of `address` matching `topics` (null: any) over the blocks findAuthorizationUse searches too: where
   * a payment that leaves no log of its own (Permit2) is looked for by its transfer.
   */
  async recentLogs(address: string, topics: ReadonlyArray<string | null>): Promise<FoundLog[]> {
    const latest = await this.provider.getBlockNumber();
    const logs = await this.provider.getLogs({ address, fromBlock: Math.max(0, latest - AUTHORIZATION_LOOKBACK_BLOCKS), toBlock: latest, topics: [...topics] });
    return logs.map((log) => ({ ...chainLogOf(log), transactionHash: log.transactionHash, blockNumber: log.blockNumber }));
  }

  /** The number of the chain's newest block. */
  async head(): Promise<number> {
    return this.provider.getBlockNumber();
  }

  /** A mined transaction's target, calldata, status and logs; undefined when the node has no receipt for it. */
  async minedTransaction(hash: string): Promise<MinedTransaction | undefined> {
    const [tx, receipt] = await Promise.all([this.provider.getTransaction(hash), this.provider.getTransactionReceipt(hash)]);
    if (!tx || !receipt) return undefined;
    return {
      hash,
      blockNumber: receipt.blockNumber,
      blockHash: receipt.blockHash,
      ...(receipt.to ? { to: receipt.to.toLowerCase() } : {}),
      data: tx.data,
      succeeded: receipt.status === 1,
      logs: receipt.logs.map(chainLogOf),
    };
  }

  /** The transaction that used this authorization on chain (ours or anyone's), with what it paid the merchant. */
  async findAuthorizationUse(authorizer: string, nonce: string, merchant: string): Promise<AuthorizationUse | undefined> {
    const latest = await this.provider.getBlockNumber();
    const used = fiatTokenInterface.getEvent('AuthorizationUsed')!;
    const logs = await this.provider.getLogs({
      address: this.tokenAddress,
      fromBlock: Math.max(0, latest - AUTHORIZATION_LOOKBACK_BLOCKS),
      toBlock: latest,
      topics: fiatTokenInterface.encodeFilterTopics(used, [authorizer, nonce]),
    });
    const log = logs[0];
    if (!log) return undefined;
    const receipt = await this.provider.getTransactionReceipt(log.transactionHash);
    return {
      transactionHash: log.transactionHash,
      blockNumber: log.blockNumber,
      paidToMerchant: receipt ? paidByAuthorization(receipt.logs, this.tokenAddress, authorizer, nonce, merchant) : 0n,
      ...(receipt?.to ? { to: receipt.to.toLowerCase() } : {}),
    };
  }
}

function chainLogOf(log: { address: string; topics: readonly string[]; data: string; index: number }): ChainLog {
  return { address: log.address.toLowerCase(), topics: [...log.topics], data: log.data, index: log.index };
}

/**
 * What a failed simulation says about the call, or undefined when it says nothing about it (the node is
 * down, rate-limits, the sender lacks gas money): those are thrown, to be retried.
 */
function simulationFailureOf(error: unknown, gasLimit: bigint | undefined): SimulationResult | undefined {
  if (!(error instanceof JsonRpcError)) {
    const reason = revertReasonOf(error);
    if (reason === undefined) return undefined;
    return gasLimit !== undefined && OUT_OF_GAS.test(nodeMessageOf(error)) ? { revert: reason, outOfGas: gasLimit } : { revert: reason };
  }
  // the node's own answer (through the endpoint pool): a revert, out of gas, or a reason it would not run it
  if (OUT_OF_GAS.test(error.message)) return { revert: error.message, ...(gasLimit !== undefined ? { outOfGas: gasLimit } : {}) };
  const { category } = classifyNodeError(error);
  if (category === 'insufficient_funds' || category === 'rpc_unavailable' || category === 'fee_too_low') return undefined;
  return { revert: category === 'execution_reverted' ? decodeRevert({ data: error.data, error: { message: error.message } }).reason : error.message };
}

/** Whether a simulation failed for running out of the gas it was given (its limit, or the node's cap). */
export function isOutOfGasAnswer(error: unknown): boolean {
  return OUT_OF_GAS.test(error instanceof JsonRpcError ? error.message : nodeMessageOf(error));
}

function nodeMessageOf(error: unknown): string {
  const e = error as { info?: { error?: { message?: unknown } }; error?: { message?: unknown }; shortMessage?: unknown; message?: unknown };
  return [e.info?.error?.message, e.error?.message, e.shortMessage, e.message].filter((m) => typeof m === 'string').join(' ');
}

/**
 * What this very authorization paid `merchant` in a transaction: the Transfer USDC emits right after its
 * AuthorizationUsed(authorizer, nonce) (`_markAuthorizationAsUsed`, then `_transfer`: back to back in every
 * `transferWithAuthorization`/`receiveWithAuthorization`), when it is from the authorizer to the merchant;
 * else 0. Never a sum of the transaction's transfers: a transaction that used the nonce to pay someone else
 * and paid the merchant by another transfer (or another authorization) did not pay this payment.
 */
export function paidByAuthorization(
  logs: ReadonlyArray<{ address: string; topics: readonly string[]; data: string }>,
  token: string,
  authorizer: string,
  nonce: string,
  merchant: string,
): bigint {
  const isToken = (log: { address: string }) => log.address.toLowerCase() === token.toLowerCase();
  const authorizerTopic = '0x' + addressWord(authorizer);
  const at = logs.findIndex(
    (log) =>
      isToken(log) &&
      log.topics.length === 3 &&
      log.topics[0].toLowerCase() === AUTHORIZATION_USED_TOPIC &&
      log.topics[1].toLowerCase() === authorizerTopic &&
      log.topics[2].toLowerCase() === nonce.toLowerCase(),
  );
  const next = at >= 0 ? logs[at + 1] : undefined;
  if (!next || !isToken(next) || next.topics.length !== 3) return 0n;
  const [topic, sender, recipient] = next.topics.map((t) => t.toLowerCase());
  if (topic !== TRANSFER_TOPIC || sender !== authorizerTopic || recipient !== '0x' + addressWord(merchant)) return 0n;
  return decodeUint(next.data);
}

/** Sum of token Transfer events from `from` to `to` among a transaction's logs. */
export function paidBetween(
  logs: ReadonlyArray<{ address: string; topics: readonly string[]; data: string }>,
  token: string,
  from: string,
  to: string,
): bigint {
  // compared as topics: Transfer(address indexed from, address indexed to, uint256 value)
  const fromTopic = '0x' + addressWord(from);
  const toTopic = '0x' + addressWord(to);
  let total = 0n;
  for (const log of logs) {
    if (log.address.toLowerCase() !== token.toLowerCase() || log.topics.length !== 3) continue;
    const [topic, sender, recipient] = log.topics.map((t) => t.toLowerCase());
    if (topic === TRANSFER_TOPIC && sender === fromTopic && recipient === toTopic) total += decodeUint(log.data);
  }
  return total;
}
