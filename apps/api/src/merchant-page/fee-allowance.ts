import type { FamilyNetwork } from '@facilitator/chain-family';
import { rpcUnavailable, SharedReadings } from '@facilitator/core';

/** How long a reading of a merchant's allowance and balance is reused: a page reload does not ask the chain again. */
const READING_MS = 10_000;
/** strangers choose the merchants a session reads (one signature each): the memo stays bounded */
const MAX_READINGS = 10_000;

/** what the page reads of a network: its id, its token and the family's reads (any family's network is one) */
export type FeeNetwork = Pick<FamilyNetwork, 'networkId' | 'token' | 'reads'>;

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

/**
 * A merchant's fee allowance to the treasury and its balance on each enabled network, read from the chain
 * through each network's family (what "allowance" means is the family's: an ERC-20 allowance, a delegation).
 */
export class FeeAllowances {
  private readonly readings = new SharedReadings<string, FeeAllowance>({ maxEntries: MAX_READINGS });

  constructor(
    private readonly networks: readonly FeeNetwork[],
    private readonly treasury: string,
    private readonly fee: bigint,
  ) {}

  of(merchant: string): Promise<FeeAllowance[]> {
    return Promise.all(this.networks.map((network) => this.readings.get(`${network.networkId}:${merchant}`, READING_MS, () => this.read(network, merchant))));
  }

  private async read({ networkId: network, token, reads }: FeeNetwork, merchant: string): Promise<FeeAllowance> {
    // a node that cannot be asked is a 503 naming the network, never a 500 (the page says so and keeps the rest)
    const [allowance, balance] = await Promise.all([reads.feeAllowance(merchant, this.treasury), reads.tokenBalance(merchant)]).catch((err: unknown) => {
      throw rpcUnavailable(network, err);
    });
    const spendable = allowance < balance ? allowance : balance;
    return {
      network,
      token,
      fee: this.fee.toString(),
      allowance: allowance.toString(),
      balance: balance.toString(),
      settlementsCovered: (this.fee > 0n ? spendable / this.fee : 0n).toString(),
      readAt: new Date(),
    };
  }
}
