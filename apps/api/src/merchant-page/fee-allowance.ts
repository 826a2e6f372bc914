import type { JsonRpcProvider } from 'ethers';
import { UsdcClient } from '@facilitator/chain-rpc';
import { rpcUnavailable, SharedReadings } from '@facilitator/core';

/** How long a reading of a merchant's allowance and balance is reused: a page reload does not ask the chain again. */
const READING_MS = 10_000;
/** strangers choose the merchants a session reads (one signature each): the memo stays bounded */
const MAX_READINGS = 10_000;

export interface FeeNetwork {
  chainId: number;
  provider: JsonRpcProvider;
  tokenAddress: string;
}

export interface FeeAllowance {
  network: string;
  token: string;
  fee: string;
  allowance: string;
  balance: string;
  /** how many more fees min(allowance, balance) pays for: a settlement needs both (spec: insufficient_allowance) */
  settlementsCovered: string;
  readAt: Date;
}

/** A merchant's fee allowance to the treasury and its balance on each enabled network, read from the chain. */
export class FeeAllowances {
  private readonly readings = new SharedReadings<string, FeeAllowance>({ maxEntries: MAX_READINGS });
  private readonly tokens: Array<{ chainId: number; token: UsdcClient }>;

  constructor(
    networks: readonly FeeNetwork[],
    private readonly treasury: string,
    private readonly fee: bigint,
  ) {
    this.tokens = networks.map((n) => ({ chainId: n.chainId, token: new UsdcClient(n.provider, n.tokenAddress) }));
  }

  of(merchant: string): Promise<FeeAllowance[]> {
    return Promise.all(this.tokens.map(({ chainId, token }) => this.readings.get(`${chainId}:${merchant}`, READING_MS, () => this.read(chainId, token, merchant))));
  }

  private async read(chainId: number, token: UsdcClient, merchant: string): Promise<FeeAllowance> {
    const network = `eip155:${chainId}`;
    // a node that cannot be asked is a 503 naming the network, never a 500 (the page says so and keeps the rest)
    const [allowance, balance] = await Promise.all([token.allowance(merchant, this.treasury), token.balanceOf(merchant)]).catch((err: unknown) => {
      throw rpcUnavailable(network, err);
    });
    const spendable = allowance < balance ? allowance : balance;
    return {
      network,
      token: token.tokenAddress.toLowerCase(),
      fee: this.fee.toString(),
      allowance: allowance.toString(),
      balance: balance.toString(),
      settlementsCovered: (this.fee > 0n ? spendable / this.fee : 0n).toString(),
      readAt: new Date(),
    };
  }
}
