import { readMarket, type MarketReading } from '@facilitator/evm-chain';
import {
  FeePolicy,
  minedReceiptFromRpc,
  SendingNodes,
  type MinedTransactionReceipt,
  type NetworkFee,
  type SendingNetworks,
} from '@facilitator/evm-sending';
import { SharedReadings } from '@facilitator/core';
import type { Fees } from '@facilitator/db';
import { keccak256, Transaction } from 'ethers';
import type { ResolvedRelayerProviderOptions } from './provider-options';

/** A mined transaction read back from the chain (the relayer signed it: we hold no bytes of it until then). */
export interface MinedTransaction {
  /** lowercase */
  from: string;
  to: string | null;
  data: string;
  nonce: bigint;
  gasLimit: bigint;
  rawTransaction: string;
  fees: Fees;
}

/**
 * What the relayer provider reads from our own nodes (never from the relayer): fees under our cap, the head,
 * receipts with their logs, and a mined transaction's signed bytes. The fee reading and cap are the local
 * keys' own (FeePolicy), so both providers agree on when the network is too expensive.
 */
export class ChainReader extends SendingNodes {
  private readonly marketReadings = new SharedReadings<number, MarketReading>();
  private readonly headReadings = new SharedReadings<number, number>();
  private readonly policies = new Map<number, FeePolicy>();

  constructor(
    networks: SendingNetworks,
    private readonly options: ResolvedRelayerProviderOptions,
  ) {
    super(networks);
  }

  /** EIP-1559 fees for a new transaction: the market, capped (the same rule as the local keys). */
  async fees(chainId: number): Promise<Fees> {
    return this.policy(chainId).market(await this.marketReading(chainId));
  }

  async networkFee(chainId: number): Promise<NetworkFee> {
    const policy = this.policy(chainId);
    const reading = await this.marketReading(chainId);
    return { baseFeePerGas: reading.baseFeePerGas, maxFeePerGasCap: policy.maxFeePerGasCap, aboveCap: policy.isAboveCap(reading) };
  }

  /** The latest block number, one read per half poll interval per chain however many transactions wait. */
  headBlock(chainId: number): Promise<number> {
    return this.headReadings.get(chainId, this.options.receiptPollIntervalMs / 2, () =>
      this.rpc(chainId, async (provider) => Number(BigInt((await provider.send('eth_blockNumber', [])) as string))),
    );
  }

  /** The receipt of whichever of these hashes was mined, if one was. */
  async findMined(chainId: number, hashes: readonly string[]): Promise<MinedTransactionReceipt | null> {
    if (hashes.length === 0) return null;
    // issued in one tick, so ethers sends them as one JSON-RPC batch
    const receipts = await this.rpc(chainId, (provider) =>
      Promise.all(hashes.map(async (hash) => minedReceiptFromRpc(await provider.send('eth_getTransactionReceipt', [hash])))),
    );
    return receipts.find((r) => r !== null) ?? null;
  }

  /**
   * A mined transaction as the chain has it: who sent what (to tell ours from the relayer's replacement of it),
   * its gas limit, and its signed bytes, from `eth_getRawTransactionByHash` where the node has it (geth, reth,
   * erigon, anvil), else rebuilt from `eth_getTransactionByHash`; checked against the hash either way.
   */
  async minedTransaction(chainId: number, hash: string): Promise<MinedTransaction> {
    return this.rpc(chainId, async (provider) => {
      const tx = (await provider.send('eth_getTransactionByHash', [hash])) as RpcTransaction | null;
      if (!tx) throw new Error(`mined transaction ${hash} is unknown to the node`);
      const raw = await (provider.send('eth_getRawTransactionByHash', [hash]) as Promise<string | null>).catch(() => null);
      const rawTransaction = raw && keccak256(raw) === hash.toLowerCase() ? raw : rebuild(tx);
      if (keccak256(rawTransaction) !== hash.toLowerCase()) throw new Error(`could not rebuild the signed bytes of ${hash}`);
      return {
        from: tx.from.toLowerCase(),
        to: tx.to?.toLowerCase() ?? null,
        data: tx.input.toLowerCase(),
        nonce: BigInt(tx.nonce),
        gasLimit: BigInt(tx.gas),
        rawTransaction,
        fees: {
          maxFeePerGas: BigInt(tx.maxFeePerGas ?? tx.gasPrice ?? '0x0'),
          maxPriorityFeePerGas: BigInt(tx.maxPriorityFeePerGas ?? tx.gasPrice ?? '0x0'),
        },
      };
    });
  }

  private policy(chainId: number): FeePolicy {
    let policy = this.policies.get(chainId);
    if (!policy) {
      // the bump percent is the relayer's business (it replaces, not us): only the cap is used
      policy = new FeePolicy(this.options.perNetworkMaxFeePerGasCap.get(chainId) ?? this.options.maxFeePerGasCap, 12.5);
      this.policies.set(chainId, policy);
    }
    return policy;
  }

  private marketReading(chainId: number): Promise<MarketReading> {
    return this.marketReadings.get(chainId, this.options.feeCacheMs, () => this.rpc(chainId, (provider) => readMarket(provider)));
  }
}

interface RpcTransaction {
  hash: string;
  type: string;
  from: string;
  to: string | null;
  nonce: string;
  gas: string;
  gasPrice?: string;
  maxFeePerGas?: string;
  maxPriorityFeePerGas?: string;
  value: string;
  input: string;
  chainId?: string;
  accessList?: Array<{ address: string; storageKeys: string[] }>;
  r: string;
  s: string;
  v: string;
  yParity?: string;
}

function rebuild(tx: RpcTransaction): string {
  const type = Number(BigInt(tx.type));
  const eip1559 = type === 2;
  return Transaction.from({
    type,
    to: tx.to,
    nonce: Number(BigInt(tx.nonce)),
    gasLimit: BigInt(tx.gas),
    ...(eip1559 ? { maxFeePerGas: BigInt(tx.maxFeePerGas!), maxPriorityFeePerGas: BigInt(tx.maxPriorityFeePerGas!) } : { gasPrice: BigInt(tx.gasPrice!) }),
    value: BigInt(tx.value),
    data: tx.input,
    chainId: tx.chainId === undefined ? undefined : BigInt(tx.chainId),
    accessList: type === 0 ? undefined : (tx.accessList ?? []),
    signature: { r: tx.r, s: tx.s, v: tx.yParity !== undefined ? 27 + Number(BigInt(tx.yParity)) : Number(BigInt(tx.v)) },
  }).serialized;
}
