import type { Address } from '@solana/kit';
import type { SvmReads } from './svm-reads';
import type { SvmTokenAccount } from './token-account';

/**
 * What the merchant's token account lets the treasury take in fees. A token account has ONE delegate: an SPL
 * Approve to anyone else replaces the treasury (and the allowance with it), so `other_delegate` names who holds
 * it now; the merchant must approve the treasury again.
 * - `delegated`: the treasury is the delegate; `allowance` is what it may still move;
 * - `other_delegate`: someone else is; allowance 0;
 * - `no_delegate`: none is (never approved, revoked, or used up: SPL clears the delegate at 0); allowance 0;
 * - `frozen`: the account is frozen, nothing moves from it; allowance 0;
 * - `no_token_account`: the merchant has no token account for the mint; allowance 0.
 */
export type FeeAllowance =
  | { readonly status: 'delegated'; readonly allowance: bigint; readonly balance: bigint; readonly tokenAccount: Address }
  | { readonly status: 'other_delegate'; readonly allowance: 0n; readonly balance: bigint; readonly tokenAccount: Address; readonly delegate: Address; readonly delegatedAmount: bigint }
  | { readonly status: 'no_delegate' | 'frozen'; readonly allowance: 0n; readonly balance: bigint; readonly tokenAccount: Address }
  | { readonly status: 'no_token_account'; readonly allowance: 0n; readonly tokenAccount: Address };

/** The allowance a token account (read at `tokenAccount`) gives the treasury: pure, over what SvmReads.tokenAccount read. */
export function feeAllowanceOf(tokenAccount: Address, account: SvmTokenAccount | undefined, treasury: string, mint: string): FeeAllowance {
  // an account of another mint at the merchant's associated address cannot be: read as none
  if (!account || account.mint !== mint) return { status: 'no_token_account', allowance: 0n, tokenAccount };
  const balance = account.amount;
  if (account.state === 'frozen') return { status: 'frozen', allowance: 0n, balance, tokenAccount };
  if (account.delegate === undefined) return { status: 'no_delegate', allowance: 0n, balance, tokenAccount };
  if (account.delegate !== treasury) {
    return { status: 'other_delegate', allowance: 0n, balance, tokenAccount, delegate: account.delegate, delegatedAmount: account.delegatedAmount };
  }
  return { status: 'delegated', allowance: account.delegatedAmount, balance, tokenAccount };
}

/** Reads the merchant's associated token account for (mint, token program) and answers what it delegates to the treasury. */
export async function delegatedFeeAllowance(reads: SvmReads, query: { merchant: string; mint: string; treasury: string; tokenProgram: string }): Promise<FeeAllowance> {
  const tokenAccount = await reads.associatedTokenAccount(query.merchant, query.mint, query.tokenProgram);
  return feeAllowanceOf(tokenAccount, await reads.tokenAccount(tokenAccount), query.treasury, query.mint);
}
