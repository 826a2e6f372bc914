import { address, type Address } from '@solana/kit';

/** The programs the fee transaction and the token reads name (SPL Token, Token-2022, Memo v2, compute budget). */
export const TOKEN_PROGRAM: Address = address('TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA');
export const TOKEN_2022_PROGRAM: Address = address('TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb');
export const MEMO_PROGRAM: Address = address('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');
export const COMPUTE_BUDGET_PROGRAM: Address = address('ComputeBudget111111111111111111111111111111');

export function isTokenProgram(program: string): program is Address {
  return program === TOKEN_PROGRAM || program === TOKEN_2022_PROGRAM;
}
