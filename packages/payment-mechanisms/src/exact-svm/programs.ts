import { address, type Address } from '@solana/kit';

/** The programs `exact` on Solana names (the same addresses `@x402/svm` 2.27's `src/constants.ts` holds). */
export const TOKEN_PROGRAM: Address = address('TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA');
export const TOKEN_2022_PROGRAM: Address = address('TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb');
export const COMPUTE_BUDGET_PROGRAM: Address = address('ComputeBudget111111111111111111111111111111');
/** SPL Memo v2, the one the stock client writes its memo with */
export const MEMO_PROGRAM: Address = address('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');
/** Lighthouse: the assertions Phantom and Solflare add to a transaction they sign */
export const LIGHTHOUSE_PROGRAM: Address = address('L2TExMFKdjpN9kozasaurPirfHy9P8sbXoAN1qA3S95');

/** the reference's bound on the compute unit price of its static path (5 lamports per compute unit) */
export const MAX_COMPUTE_UNIT_PRICE_MICROLAMPORTS = 5_000_000n;

export function isTokenProgram(program: Address): boolean {
  return program === TOKEN_PROGRAM || program === TOKEN_2022_PROGRAM;
}
