import { evmNetworkId, familyOfNetworkId } from '@facilitator/core';

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
 *
 * A network no family has, or an EVM network that is not the row's chain's, is refused: every writer of ours
 * stores its registry network's id, so such a row is a database writer's, and a key spelt from it would not
 * be the key of the same payment written honestly (a second live settlement of one payment).
 */
export function paymentKeyOf(p: PaymentIdentity): string {
  const family = familyOfNetworkId(p.network);
  if (family === undefined) throw new Error(`payment on network ${JSON.stringify(p.network)}: no chain family has that network`);
  if (family === 'evm') {
    if (p.network !== evmNetworkId(p.chainId)) throw new Error(`payment on network ${p.network} is stored on chain ${p.chainId}: the two disagree`);
    return `${p.chainId}:${p.nonceSpace}:${p.payer}:${p.nonce}`.toLowerCase();
  }
  return `${p.network}:${p.nonceSpace}:${p.payer}:${p.nonce}`;
}
