/**
 * What verification needs from the chain. Implemented over RPC by the chain package; errors thrown
 * here mean the chain could not be asked (the caller answers 503), never that a payment is invalid.
 */
export interface ChainReader {
  /** The pinned EIP-712 domain separator of the network's token (configured or read once, then cached). */
  domainSeparator(chainId: number): Promise<Uint8Array>;
  /** USDC's authorizationState: true when the nonce was used or cancelled on chain. */
  isAuthorizationUsed(chainId: number, payer: string, nonce: string): Promise<boolean>;
  /**
   * An eth_call of another contract (Permit2's nonce bitmap, a token's allowance), at the latest block, on
   * the same batched client: what a mechanism other than EIP-3009 reads about a payment.
   */
  readContract(chainId: number, to: string, data: string): Promise<string>;
  /**
   * For contract wallets (ERC-1271): does `signer` accept this signature for this digest?
   * Returns undefined when the signer has no code (an ordinary key, whose signature simply failed). An
   * ERC-6492 signature of a wallet not deployed yet is checked as the wallet would once its (allowlisted)
   * factory deployed it; a refusal may say why.
   */
  isValidContractSignature(chainId: number, signer: string, digest: Uint8Array, signature: string): Promise<boolean | { refused: string } | undefined>;
  /**
   * The pinned EIP-712 domain name and version of the network's token (configured or read from the
   * token). Optional: only the x402 surface compares it with the `extra.name`/`extra.version` a request
   * claims; without it that comparison is skipped and the signature check alone decides.
   */
  tokenDomain?(chainId: number): Promise<{ name: string; version: string }>;
}
