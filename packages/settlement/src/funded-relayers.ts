import { RelayerRotation } from '@facilitator/evm-sending';

/** A relayer's native balance and the minimum under which it is skipped (RELAYER_MIN_BALANCE_<chainId>). */
export interface RelayerFunds {
  balanceOf(chainId: number, relayer: string): Promise<bigint>;
  minimum(chainId: number): bigint;
  /** told after each reading: the alert metric of a dry relayer */
  onReading?(chainId: number, relayer: string, dry: boolean): void;
}

/**
 * A worker's relayer keys taken in turn, skipping any whose balance is under its network's minimum. One per
 * worker, shared by the machine's sequential sends and the atomic batches, so both spread over the keys from
 * one position and read balances the same way.
 */
export class FundedRelayers {
  private readonly rotation: RelayerRotation;

  /** without `funds` every relayer counts as funded */
  constructor(
    readonly addresses: readonly string[],
    private readonly funds?: RelayerFunds,
  ) {
    this.rotation = new RelayerRotation(addresses);
  }

  /**
   * The next relayer in turn whose balance is at least its minimum; undefined when none is. `among` limits
   * the choice (the atomic batches: only the keys the executor names, during a key rotation).
   */
  async next(chainId: number, among?: readonly string[]): Promise<string | undefined> {
    for (let tried = 0; tried < this.addresses.length; tried++) {
      const relayer = this.rotation.next();
      if (among && !among.includes(relayer.toLowerCase())) continue;
      if (await this.isFunded(chainId, relayer)) return relayer;
    }
    return undefined;
  }

  async anyFunded(chainId: number): Promise<boolean> {
    for (const relayer of this.addresses) if (await this.isFunded(chainId, relayer)) return true;
    return false;
  }

  private async isFunded(chainId: number, relayer: string): Promise<boolean> {
    if (!this.funds) return true;
    const dry = (await this.funds.balanceOf(chainId, relayer)) < this.funds.minimum(chainId);
    this.funds.onReading?.(chainId, relayer, dry);
    return !dry;
  }
}
