import { AccountState, getTokenDecoder, getTokenSize } from '@solana-program/token';
import type { Address, ReadonlyUint8Array } from '@solana/kit';
import { isTokenProgram } from './programs';

/** An initialised SPL Token (or Token-2022) account, as the fee and payment steps read it. */
export interface SvmTokenAccount {
  readonly mint: Address;
  /** the wallet that owns the tokens (not the program that owns the account) */
  readonly owner: Address;
  readonly amount: bigint;
  /** the one delegate a token account can have (SPL Approve replaces it), absent when none */
  readonly delegate?: Address;
  /** what the delegate may still move; 0 without a delegate */
  readonly delegatedAmount: bigint;
  readonly state: 'initialized' | 'frozen';
  /** the program that owns the account: SPL Token or Token-2022 */
  readonly tokenProgram: Address;
}

const BASE_SIZE = getTokenSize();
const decoder = getTokenDecoder();

/**
 * Reads an account's bytes as a token account: undefined unless a token program owns it, it holds at least the
 * base layout (Token-2022 puts its extensions after the same 165 bytes) and it is initialised. An associated
 * token account's address can hold something else (lamports sent to it before the account was made).
 */
export function decodeTokenAccount(programOwner: string, data: ReadonlyUint8Array): SvmTokenAccount | undefined {
  if (!isTokenProgram(programOwner) || data.length < BASE_SIZE) return undefined;
  const token = decoder.decode(data.subarray(0, BASE_SIZE));
  if (token.state === AccountState.Uninitialized) return undefined;
  return {
    mint: token.mint,
    owner: token.owner,
    amount: token.amount,
    ...(token.delegate.__option === 'Some' ? { delegate: token.delegate.value } : {}),
    delegatedAmount: token.delegate.__option === 'Some' ? token.delegatedAmount : 0n,
    state: token.state === AccountState.Frozen ? 'frozen' : 'initialized',
    tokenProgram: programOwner,
  };
}
