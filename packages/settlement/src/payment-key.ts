import { familyOfNetworkId } from '@facilitator/core';

/** What names a payment: its network, the contract (or program) that records its nonce, its payer and nonce. */
export interface PaymentIdentity {
  /** the CAIP-2 id (`eip155:8453`, `solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1`) */
  network: string;
  /** the EVM chain id; what an EVM key is spelled with */
  chainId: number;
  nonceSpace: string;
  payer: string;
  nonce: string;
}

/**
 * The payment key: unique among live settlements (settlements.payment_key), one per payment.
 * On an EVM network `chainId:nonceSpace:payer:nonce`, lowercased: byte-identical to every key written before
 * records had a network (an EIP-3009 nonce's space is its token, so keys older than spaces still match), and
 * hex addresses are one address whatever their case. Any other family's key starts with its CAIP-2 id and
 * keeps its case: a base58 address is a different address in another case.
 */
export function paymentKeyOf(p: PaymentIdentity): string {
  if (familyOfNetworkId(p.network) === 'evm') return `${p.chainId}:${p.nonceSpace}:${p.payer}:${p.nonce}`.toLowerCase();
  return `${p.network}:${p.nonceSpace}:${p.payer}:${p.nonce}`;
}
