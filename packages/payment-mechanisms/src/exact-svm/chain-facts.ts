import { getAddressDecoder, getU16Decoder, type Address, type ReadonlyUint8Array } from '@solana/kit';
import { isTokenProgram, TOKEN_2022_PROGRAM } from './programs';
import { ExactSvmReason, refuse, type ExactSvmRefusal } from './reasons';

/**
 * The gaps the reference leaves to the operator (issue 43), closed over facts read from the chain: the
 * caller reads the accounts (`getAccountInfo`, base64) and passes what it got; these functions read nothing.
 * Their refusals carry `problem`, what exactly is wrong, beside the x402 code (the specification's
 * `invalid_payment_requirements`: the merchant's requirements name what cannot be paid, the payer did no wrong).
 */

/** An account as `getAccountInfo` answers it: `null` when none exists at the address. */
export interface SvmAccountFacts {
  /** the program that owns the account */
  readonly owner: Address | string;
  readonly data: ReadonlyUint8Array;
}

export type PayToAccountProblem = 'pay_to_token_account_missing' | 'pay_to_token_account_invalid' | 'pay_to_token_account_frozen';
export type MintProblem = 'mint_missing' | 'mint_not_a_token_mint' | 'mint_transfer_fee' | 'mint_transfer_hook';

export interface ChainFactRefusal<Problem extends string> extends ExactSvmRefusal {
  readonly problem: Problem;
}

/** What the destination should be: the associated token account of (payee, mint, token program). */
export interface ExpectedTokenAccount {
  readonly payee: Address | string;
  readonly mint: Address | string;
  readonly tokenProgram: Address | string;
}

// SPL Token account layout (Token-2022 shares its first 165 bytes): mint, owner, amount, delegate, state
const TOKEN_ACCOUNT_SIZE = 165;
const TOKEN_ACCOUNT_STATE_OFFSET = 108;
const AccountState = { Uninitialized: 0, Initialized: 1, Frozen: 2 } as const;

/**
 * The payTo's token account, the transfer's destination, can receive the payment. The reference lets a payTo
 * without one through to its simulation, whose failure it answers as any other; a merchant that has not
 * created its token account (or whose account is frozen) deserves to be told so at verify.
 */
export function payToAccountProblem(destinationAccountInfo: SvmAccountFacts | null, expected: ExpectedTokenAccount): ChainFactRefusal<PayToAccountProblem> | undefined {
  if (!destinationAccountInfo) {
    return problem(
      'pay_to_token_account_missing',
      `payTo ${expected.payee} has no token account for mint ${expected.mint}: its associated token account must be created before it can be paid`,
    );
  }
  const { owner, data } = destinationAccountInfo;
  if (owner !== expected.tokenProgram || data.length < TOKEN_ACCOUNT_SIZE) {
    return problem('pay_to_token_account_invalid', `the destination account of payTo ${expected.payee} is not a token account of ${expected.tokenProgram}`);
  }
  const addresses = getAddressDecoder();
  const [mint, tokenOwner] = [addresses.decode(data, 0), addresses.decode(data, 32)];
  if (mint !== expected.mint || tokenOwner !== expected.payee || data[TOKEN_ACCOUNT_STATE_OFFSET] === AccountState.Uninitialized) {
    return problem('pay_to_token_account_invalid', `the destination account of payTo ${expected.payee} is not its initialised token account for mint ${expected.mint}`);
  }
  if (data[TOKEN_ACCOUNT_STATE_OFFSET] === AccountState.Frozen) {
    return problem('pay_to_token_account_frozen', `the token account of payTo ${expected.payee} for mint ${expected.mint} is frozen`);
  }
  return undefined;
}

// SPL Token mint layout: mint authority (36), supply (8), decimals (1), is_initialized (1), freeze authority (36)
const MINT_SIZE = 82;
const MINT_INITIALIZED_OFFSET = 45;
// Token-2022 extensions: the base account padded to a token account's size, an account-type byte, then TLV
// entries (u16 type, u16 length, value), spl-token-2022's `ExtensionType`
const ACCOUNT_TYPE_OFFSET = TOKEN_ACCOUNT_SIZE;
const ACCOUNT_TYPE_MINT = 1;
const TLV_START = ACCOUNT_TYPE_OFFSET + 1;
const EXTENSION_TRANSFER_FEE_CONFIG = 1;
const EXTENSION_TRANSFER_HOOK = 14;

/**
 * The asset's mint is one whose transfers settle as `exact` means them: a Token-2022 mint with a transfer fee
 * pays the merchant less than the amount (and its authority can raise the fee later), one with a transfer hook
 * runs a program of the mint's choosing in every transfer (which can fail it, or change once verified). Both
 * are refused while present, whatever their current settings. The reference checks neither.
 */
export function mintProblem(mintAccountInfo: SvmAccountFacts | null): ChainFactRefusal<MintProblem> | undefined {
  if (!mintAccountInfo) return problem('mint_missing', 'the asset has no mint account');
  const { owner, data } = mintAccountInfo;
  if (!isTokenProgram(owner as Address) || data.length < MINT_SIZE || data[MINT_INITIALIZED_OFFSET] !== 1) {
    return problem('mint_not_a_token_mint', 'the asset is not an initialised mint of SPL Token or Token-2022');
  }
  if (owner !== TOKEN_2022_PROGRAM || data.length <= TOKEN_ACCOUNT_SIZE) return undefined;
  if (data[ACCOUNT_TYPE_OFFSET] !== ACCOUNT_TYPE_MINT) return problem('mint_not_a_token_mint', 'the asset is a Token-2022 account that is not a mint');
  const u16 = getU16Decoder();
  for (let offset = TLV_START; offset + 4 <= data.length; ) {
    const type = u16.decode(data, offset);
    const length = u16.decode(data, offset + 2);
    if (type === EXTENSION_TRANSFER_FEE_CONFIG) return problem('mint_transfer_fee', 'the asset is a Token-2022 mint with a transfer fee: the merchant would receive less than the amount');
    if (type === EXTENSION_TRANSFER_HOOK) return problem('mint_transfer_hook', 'the asset is a Token-2022 mint with a transfer hook: a program of its own runs in every transfer');
    // type 0 (Uninitialized) pads the end of the account
    if (type === 0) break;
    offset += 4 + length;
  }
  return undefined;
}

function problem<Problem extends string>(kind: Problem, message: string): ChainFactRefusal<Problem> {
  return { ...refuse(ExactSvmReason.InvalidPaymentRequirements, message), problem: kind };
}
