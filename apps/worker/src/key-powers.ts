import type { Signer } from '@facilitator/signers';

export interface KeyPower {
  role: 'treasury' | 'relayer';
  address: string;
  /** where the key is: `local:0x…` (this process's memory), `kms:arn…`, `pkcs11:token=…;object=…` */
  heldBy: string;
  /** what whoever reads this key from the worker (environment, core dump, log) can do with it */
  canDo: string;
}

/**
 * What each key this worker holds can do to merchants' money, said at start-up so that an operator sees
 * which secrets matter most (README, "Keys and what a leak costs").
 */
export function keyPowers(keys: { treasury?: Signer; relayers: readonly Signer[] }, feeAmount: bigint): KeyPower[] {
  const powers: KeyPower[] = [];
  const { treasury } = keys;
  if (treasury) {
    powers.push({
      role: 'treasury',
      address: treasury.address.toLowerCase(),
      heldBy: treasury.description,
      canDo: "transferFrom every merchant's whole allowance to any address (held for SETTLEMENT_MODE=sequential and the sequential fallback; the atomic path does not need it)",
    });
  }
  for (const relayer of keys.relayers) {
    if (relayer === treasury) continue;
    powers.push({
      role: 'relayer',
      address: relayer.address.toLowerCase(),
      heldBy: relayer.description,
      canDo: `spend its own ETH on gas; through the settlement executor, take a merchant's fee (${feeAmount} units) only together with a payer-signed payment to that merchant of at least the fee: no merchant's balance moves otherwise`,
    });
  }
  return powers;
}
