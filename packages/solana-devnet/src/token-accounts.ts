import { isSome, type Option } from '@solana/kit';
import { getMintDecoder, getTokenDecoder } from '@solana-program/token';

export const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
export const TOKEN_2022_PROGRAM = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';
const TOKEN_ACCOUNT_SIZE = 165;
const MINT_SIZE = 82;
// Token-2022 accounts with extensions carry an account-type byte after the base layout (1 = mint, 2 = account)
const ACCOUNT_TYPE_OFFSET = 165;

export interface TokenAccountState {
  mint: string;
  owner: string;
  amount: bigint;
  delegate: string | null;
  delegatedAmount: bigint;
  state: 'uninitialized' | 'initialized' | 'frozen';
  isNative: bigint | null;
  closeAuthority: string | null;
}

export interface MintState {
  mintAuthority: string | null;
  supply: bigint;
  decimals: number;
  isInitialized: boolean;
  freezeAuthority: string | null;
}

const isTokenProgram = (owner: string) => owner === TOKEN_PROGRAM || owner === TOKEN_2022_PROGRAM;
const optional = <T>(option: Option<T>): T | null => (isSome(option) ? option.value : null);

/** The SPL token account in `data`, or undefined if the account is not one (wrong owner or layout). */
export function readTokenAccount(owner: string, data: Uint8Array): TokenAccountState | undefined {
  if (!isTokenProgram(owner)) return undefined;
  const base = data.length === TOKEN_ACCOUNT_SIZE || (owner === TOKEN_2022_PROGRAM && data.length > ACCOUNT_TYPE_OFFSET && data[ACCOUNT_TYPE_OFFSET] === 2);
  if (!base) return undefined;
  const token = getTokenDecoder().decode(data.subarray(0, TOKEN_ACCOUNT_SIZE));
  const states = ['uninitialized', 'initialized', 'frozen'] as const;
  return {
    mint: token.mint,
    owner: token.owner,
    amount: token.amount,
    delegate: optional(token.delegate),
    delegatedAmount: token.delegatedAmount,
    state: states[token.state] ?? 'uninitialized',
    isNative: optional(token.isNative),
    closeAuthority: optional(token.closeAuthority),
  };
}

export function readMint(owner: string, data: Uint8Array): MintState | undefined {
  if (!isTokenProgram(owner)) return undefined;
  const base = data.length === MINT_SIZE || (owner === TOKEN_2022_PROGRAM && data.length > ACCOUNT_TYPE_OFFSET && data[ACCOUNT_TYPE_OFFSET] === 1);
  if (!base) return undefined;
  const mint = getMintDecoder().decode(data.subarray(0, MINT_SIZE));
  return {
    mintAuthority: optional(mint.mintAuthority),
    supply: mint.supply,
    decimals: mint.decimals,
    isInitialized: mint.isInitialized,
    freezeAuthority: optional(mint.freezeAuthority),
  };
}

/** The RPC's UiTokenAmount. */
export function uiTokenAmount(amount: bigint, decimals: number) {
  const text = amount.toString().padStart(decimals + 1, '0');
  const whole = text.slice(0, text.length - decimals);
  const fraction = text.slice(text.length - decimals).replace(/0+$/, '');
  const uiAmountString = fraction ? `${whole}.${fraction}` : whole;
  return { amount: amount.toString(), decimals, uiAmount: Number(uiAmountString), uiAmountString };
}

/** The `jsonParsed` form of a token account or mint, as the RPC's account decoder writes it (spl-token only). */
export function parsedTokenData(owner: string, data: Uint8Array, decimalsOf: (mint: string) => number | undefined) {
  const program = owner === TOKEN_PROGRAM ? 'spl-token' : 'spl-token-2022';
  const account = readTokenAccount(owner, data);
  if (account) {
    const decimals = decimalsOf(account.mint) ?? 0;
    const info: Record<string, unknown> = {
      isNative: account.isNative !== null,
      mint: account.mint,
      owner: account.owner,
      state: account.state,
      tokenAmount: uiTokenAmount(account.amount, decimals),
    };
    if (account.delegate) {
      info.delegate = account.delegate;
      info.delegatedAmount = uiTokenAmount(account.delegatedAmount, decimals);
    }
    if (account.closeAuthority) info.closeAuthority = account.closeAuthority;
    return { program, parsed: { type: 'account', info }, space: data.length };
  }
  const mint = readMint(owner, data);
  if (mint) {
    const info = {
      decimals: mint.decimals,
      freezeAuthority: mint.freezeAuthority,
      isInitialized: mint.isInitialized,
      mintAuthority: mint.mintAuthority,
      supply: mint.supply.toString(),
    };
    return { program, parsed: { type: 'mint', info }, space: data.length };
  }
  return undefined;
}
