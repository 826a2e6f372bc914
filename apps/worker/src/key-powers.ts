import type { WorkerProcessConfig } from '@facilitator/config';

export interface KeyPower {
  role: 'treasury' | 'relayer';
  address: string;
  /** what whoever reads this key from the worker (environment, core dump, log) can do with it */
  canDo: string;
}

/**
 * What each key this worker holds can do to merchants' money, said at start-up so that an operator sees
 * which secrets matter most (README, "Keys and what a leak costs").
 */
export function keyPowers(config: Pick<WorkerProcessConfig, 'treasury' | 'relayers' | 'feeAmount'>): KeyPower[] {
  const powers: KeyPower[] = [];
  if (config.treasury) {
    powers.push({
      role: 'treasury',
      address: config.treasury.address,
      canDo: "transferFrom every merchant's whole allowance to any address (held for SETTLEMENT_MODE=sequential and the sequential fallback; the atomic path does not need it)",
    });
  }
  for (const relayer of config.relayers) {
    if (relayer.address === config.treasury?.address) continue;
    powers.push({
      role: 'relayer',
      address: relayer.address,
      canDo: `spend its own ETH on gas; through the settlement executor, take a merchant's fee (${config.feeAmount} units) only together with a payer-signed payment to that merchant of at least the fee: no merchant's balance moves otherwise`,
    });
  }
  return powers;
}
