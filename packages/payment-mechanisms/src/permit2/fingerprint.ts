import { createHash } from 'node:crypto';
import type { MechanismNetwork } from '../mechanism';
import { PERMIT2_ADDRESS } from './addresses';
import type { Permit2Transfer } from './payload';
import { type PaymentMechanismId } from '../mechanism-ids';

/**
 * A Permit2 payment's identity: sha256 of the mechanism id, the chain, Permit2, then every field the payer
 * signed in the order of its typed data (the proxy's own witness fields between the recipient and the first
 * second), joined by colons, lowercase. Prefixed with the mechanism: an EIP-3009 payment's fingerprint, or
 * another proxy's for the same fields, can never equal it.
 */
export function permit2Fingerprint(mechanism: PaymentMechanismId, p: Permit2Transfer, network: MechanismNetwork, ownWitness: readonly string[] = []): string {
  const text = [mechanism, network.chainId, PERMIT2_ADDRESS, p.from, p.token, p.amount, p.spender, p.nonce, p.deadline, p.to, ...ownWitness, p.validAfter]
    .map(String)
    .join(':')
    .toLowerCase();
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
