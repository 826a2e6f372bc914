import type { WorkerKeys } from './worker-keys';

export interface KeyPower {
  role: 'treasury' | 'relayer';
  address: string;
  /** where the key is: `local:0x…` (this process's memory), `kms:arn…`, `pkcs11:token=…;object=…`, `openzeppelin-relayer:<id>` */
  heldBy: string;
  /** what whoever gets hold of this key (or the relayer server's credentials for it) can do with it */
  canDo: string;
}

const TREASURY_CAN =
  "transferFrom every merchant's whole allowance to any address (held for SETTLEMENT_MODE=sequential and the sequential fallback; the atomic path does not need it)";
const relayerCan = (feeAmount: bigint) =>
  `spend its own ETH on gas; through the settlement executor, take a merchant's fee (${feeAmount} units) only together with a payer-signed payment to that merchant of at least the fee: no merchant's balance moves otherwise`;

/**
 * What each key this worker sends with can do to merchants' money, said at start-up so that an operator sees
 * which secrets matter most (README, "Keys and what a leak costs").
 */
export function keyPowers(keys: WorkerKeys, feeAmount: bigint): KeyPower[] {
  if (keys.kind === 'openzeppelin-relayer') {
    const treasury = keys.bindings.filter((b) => !keys.relayerAddresses.includes(b.address));
    return [
      ...treasury.map((b) => ({ role: 'treasury' as const, address: b.address, heldBy: `openzeppelin-relayer:${b.id}`, canDo: TREASURY_CAN })),
      ...keys.bindings
        .filter((b) => keys.relayerAddresses.includes(b.address))
        .map((b) => ({ role: 'relayer' as const, address: b.address, heldBy: `openzeppelin-relayer:${b.id}`, canDo: relayerCan(feeAmount) })),
    ];
  }
  const powers: KeyPower[] = [];
  const { treasury } = keys;
  if (treasury) powers.push({ role: 'treasury', address: treasury.address.toLowerCase(), heldBy: treasury.description, canDo: TREASURY_CAN });
  for (const relayer of keys.relayers) {
    if (relayer === treasury) continue;
    powers.push({ role: 'relayer', address: relayer.address.toLowerCase(), heldBy: relayer.description, canDo: relayerCan(feeAmount) });
  }
  return powers;
}
