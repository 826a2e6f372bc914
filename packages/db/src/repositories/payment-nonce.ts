/**
 * A payment nonce's on-chain identity: the chain, the contract that records its use (`nonce_space`: the
 * token for EIP-3009, Permit2 for Permit2, whose nonces every token shares), the payer and the nonce as
 * lowercase bytes32. Two payments with one identity can never both execute: it is what every reader of a
 * payment's identity asks by.
 */
export interface PaymentNonce {
  chainId: number;
  nonceSpace: string;
  payer: string;
  nonce: string;
}
