import { findAssociatedTokenPda } from '@solana-program/token';
import { address, getPublicKeyFromAddress, getU32Decoder, getU64Decoder, verifySignature, type Address, type ReadonlyUint8Array, type SignatureBytes } from '@solana/kit';
import { decodeSvmTransaction, type DecodedSvmInstruction, type DecodedSvmTransaction } from './decode';
import { COMPUTE_BUDGET_PROGRAM, isTokenProgram, LIGHTHOUSE_PROGRAM, MAX_COMPUTE_UNIT_PRICE_MICROLAMPORTS, MEMO_PROGRAM } from './programs';
import { ExactSvmReason, refuse, type ExactSvmRefusal } from './reasons';

/** What of x402's payment requirements these rules read (v2 names: `amount`, not v1's `maxAmountRequired`). */
export interface ExactSvmRequirements {
  readonly asset: string;
  readonly amount: string;
  readonly payTo: string;
  readonly extra?: Readonly<Record<string, unknown>>;
}

/** What this facilitator allows: its fee payers and its bounds on what a payment costs it in fees. */
export interface ExactSvmPolicy {
  /** every fee payer this facilitator signs for (its `/supported` signers) */
  readonly feePayers: readonly string[];
  /** the highest compute unit price accepted; the reference's 5,000,000 (5 lamports per unit) when unset */
  readonly maxComputeUnitPriceMicroLamports?: bigint;
  /** the highest compute unit limit accepted; unbounded when unset, as the reference's default */
  readonly maxComputeUnits?: number;
}

/** What an accepted payment is: who pays whom, how much of what, through which accounts. */
export interface ExactSvmTerms {
  /** the transfer's authority: the client, who signed */
  readonly payer: Address;
  /** `requirements.payTo`, owner of the destination token account */
  readonly payee: Address;
  readonly source: Address;
  /** the associated token account of (payee, mint, token program) */
  readonly destination: Address;
  readonly mint: Address;
  readonly tokenProgram: Address;
  readonly amount: bigint;
  readonly decimals: number;
  readonly feePayer: Address;
  readonly recentBlockhash: string;
  /** the first Memo instruction's data as UTF-8 (the seller's `extra.memo`, or the stock client's nonce) */
  readonly memo: string | undefined;
}

export type ExactSvmCheck = { readonly ok: true; readonly terms: ExactSvmTerms } | ExactSvmRefusal;

const SET_COMPUTE_UNIT_LIMIT = 2;
const SET_COMPUTE_UNIT_PRICE = 3;
const TRANSFER_CHECKED = 12;
/** the reference's static path takes 3 to 7 instructions: limit, price, transfer, then up to 4 Memo or Lighthouse */
const MIN_INSTRUCTIONS = 3;
const MAX_INSTRUCTIONS = 7;
/** the client and the fee payer: the reference's `maxRequiredSignatures` option, which we always set */
const MAX_REQUIRED_SIGNATURES = 2;
const UNKNOWN_OPTIONAL_INSTRUCTION = [
  ExactSvmReason.UnknownFourthInstruction,
  ExactSvmReason.UnknownFifthInstruction,
  ExactSvmReason.UnknownSixthInstruction,
  ExactSvmReason.UnknownSeventhInstruction,
] as const;

/**
 * The requirements' side of the reference's verify, checked before it reads the transaction
 * (`ExactSvmScheme._verify`: missing fee payer, then a fee payer the facilitator does not sign for).
 */
export function checkExactSvmRequirements(requirements: ExactSvmRequirements, ours: ExactSvmPolicy): ExactSvmRefusal | undefined {
  const feePayer = requirements.extra?.feePayer;
  if (!feePayer || typeof feePayer !== 'string') return refuse(ExactSvmReason.MissingFeePayer, 'the requirements name no fee payer (extra.feePayer)');
  if (!ours.feePayers.includes(feePayer)) return refuse(ExactSvmReason.FeePayerNotManaged, `fee payer ${feePayer} is not one of this facilitator's`);
  return undefined;
}

/** The whole of verify's rules over a payload's transaction, in the reference's order: requirements, decoding, the payment. */
export async function checkExactSvmTransaction(transactionBase64: string, requirements: ExactSvmRequirements, ours: ExactSvmPolicy): Promise<ExactSvmCheck> {
  const requirementsRefusal = checkExactSvmRequirements(requirements, ours);
  if (requirementsRefusal) return requirementsRefusal;
  const decoded = decodeSvmTransaction(transactionBase64);
  if (!decoded.ok) return decoded;
  return checkExactSvmPayment(decoded.transaction, requirements, ours);
}

/**
 * x402 `exact` on Solana: the rules of `@x402/svm` 2.27's facilitator (`ExactSvmScheme._verify` and its static
 * path `verifyStaticPath`), in its order and with its codes, then ours where it leaves a gap: the fee payer
 * referenced by no instruction, and no signer required but the client and the fee payer. Pure: what needs the
 * chain (the simulation, the payTo's token account, the mint's extensions) is the caller's, beside these.
 */
export async function checkExactSvmPayment(decoded: DecodedSvmTransaction, requirements: ExactSvmRequirements, ours: ExactSvmPolicy): Promise<ExactSvmCheck> {
  const requirementsRefusal = checkExactSvmRequirements(requirements, ours);
  if (requirementsRefusal) return requirementsRefusal;
  const feePayer = requirements.extra?.feePayer as string;

  // signers (`maxRequiredSignatures`, then `verifyRequiredSignatures`)
  if (decoded.header.numSignerAccounts > MAX_REQUIRED_SIGNATURES) {
    return refuse(ExactSvmReason.ExcessiveSigners, `the transaction requires ${decoded.header.numSignerAccounts} signatures; only the client's and the fee payer's are allowed`);
  }
  if (decoded.feePayer !== feePayer) return refuse(ExactSvmReason.FeePayerMismatch, `the transaction's fee payer is ${decoded.feePayer}, not ${feePayer}`);
  // every signer but the fee payer must have signed (the fee payer signs at settlement)
  for (const { signer, signature } of decoded.signatures.slice(1)) {
    if (!signature || signature.length !== 64 || !(await signatureValid(signer, signature, decoded.messageBytes))) {
      return refuse(ExactSvmReason.SignatureInvalid, `${signer} has not signed the transaction`);
    }
  }

  // the instruction layout: limit, price, TransferChecked, then Memo or Lighthouse only
  const { instructions } = decoded;
  if (instructions.length < MIN_INSTRUCTIONS || instructions.length > MAX_INSTRUCTIONS) {
    return refuse(ExactSvmReason.InstructionsLength, `the transaction has ${instructions.length} instructions; ${MIN_INSTRUCTIONS} to ${MAX_INSTRUCTIONS} are accepted`);
  }
  const computeRefusal = checkComputeLimit(instructions[0], ours) ?? checkComputePrice(instructions[1], ours);
  if (computeRefusal) return computeRefusal;
  // the reference names the payer from the first token instruction with 4 accounts, wherever it is
  if (!instructions.some((instruction) => isTokenProgram(instruction.programAddress) && instruction.accounts.length >= 4)) {
    return refuse(ExactSvmReason.NoTransferInstruction, 'the transaction has no token transfer');
  }
  const transfer = parseTransferChecked(instructions[2]);
  if (!transfer) return refuse(ExactSvmReason.NoTransferInstruction, 'the third instruction is not a TransferChecked of SPL Token or Token-2022');

  // the transfer
  if (ours.feePayers.includes(transfer.authority)) {
    return refuse(ExactSvmReason.FeePayerTransferringFunds, `the transfer's authority ${transfer.authority} is a fee payer of this facilitator`);
  }
  if (transfer.mint !== requirements.asset) return refuse(ExactSvmReason.MintMismatch, `the transfer moves mint ${transfer.mint}, not ${requirements.asset}`);
  const expectedDestination = await associatedTokenAccount(requirements.payTo, requirements.asset, transfer.tokenProgram);
  if (transfer.destination !== expectedDestination) {
    return refuse(ExactSvmReason.RecipientMismatch, `the transfer pays ${transfer.destination}, not the associated token account of ${requirements.payTo}`);
  }
  const required = integerOrUndefined(requirements.amount);
  if (required === undefined || transfer.amount !== required) {
    return refuse(ExactSvmReason.AmountMismatch, `the transfer moves ${transfer.amount}, not the required ${requirements.amount}`);
  }
  const optional = instructions.slice(MIN_INSTRUCTIONS);
  const unknown = optional.findIndex(({ programAddress }) => programAddress !== MEMO_PROGRAM && programAddress !== LIGHTHOUSE_PROGRAM);
  if (unknown >= 0) {
    return refuse(UNKNOWN_OPTIONAL_INSTRUCTION[unknown], `instruction ${MIN_INSTRUCTIONS + unknown + 1} calls ${optional[unknown].programAddress}; only Memo and Lighthouse may follow the transfer`);
  }
  const memos = optional.filter(({ programAddress }) => programAddress === MEMO_PROGRAM).map(({ data }) => new TextDecoder().decode(new Uint8Array(data)));
  // the reference checks a truthy memo only, and compares it as given (a non-string never matches)
  const expectedMemo = requirements.extra?.memo;
  if (expectedMemo) {
    if (memos.length !== 1) return refuse(ExactSvmReason.MemoCount, `the transaction has ${memos.length} memos; exactly one, the seller's, is required`);
    if (memos[0] !== expectedMemo) return refuse(ExactSvmReason.MemoMismatch, "the transaction's memo is not the seller's (extra.memo)");
  }

  // ours, where the reference's static path leaves the scheme's sponsor rules (specification §2.1.1, §2.1.4) unchecked
  const isolation = checkFeePayersIsolated(instructions, ours.feePayers);
  if (isolation) return isolation;
  const signers = decoded.signatures.slice(1).map(({ signer }) => signer);
  if (signers.length === 0) return refuse(ExactSvmReason.SignatureInvalid, `the transfer's authority ${transfer.authority} does not sign the transaction`);
  if (signers[0] !== transfer.authority) {
    return refuse(ExactSvmReason.ExcessiveSigners, `the transaction requires the signature of ${signers[0]}, who is not the transfer's authority ${transfer.authority}`);
  }

  return {
    ok: true,
    terms: {
      payer: transfer.authority,
      payee: address(requirements.payTo),
      source: transfer.source,
      destination: transfer.destination,
      mint: transfer.mint,
      tokenProgram: transfer.tokenProgram,
      amount: transfer.amount,
      decimals: transfer.decimals,
      feePayer: decoded.feePayer,
      recentBlockhash: decoded.recentBlockhash,
      memo: memos[0],
    },
  };
}

/** `verifyComputeLimitInstruction`: SetComputeUnitLimit (discriminator 2, a u32), within `maxComputeUnits` when set. */
function checkComputeLimit(instruction: DecodedSvmInstruction, ours: ExactSvmPolicy): ExactSvmRefusal | undefined {
  const { programAddress, data } = instruction;
  if (programAddress !== COMPUTE_BUDGET_PROGRAM || data[0] !== SET_COMPUTE_UNIT_LIMIT || data.length < 5) {
    return refuse(ExactSvmReason.ComputeLimitInstruction, 'the first instruction is not a compute unit limit');
  }
  const units = getU32Decoder().decode(data, 1);
  if (ours.maxComputeUnits !== undefined && units > ours.maxComputeUnits) {
    return refuse(ExactSvmReason.ComputeLimitInstructionTooHigh, `a compute unit limit of ${units}; at most ${ours.maxComputeUnits} is accepted`);
  }
  return undefined;
}

/** `verifyComputePriceInstruction`: SetComputeUnitPrice (discriminator 3, a u64 of micro-lamports), within the bound. */
function checkComputePrice(instruction: DecodedSvmInstruction, ours: ExactSvmPolicy): ExactSvmRefusal | undefined {
  const { programAddress, data } = instruction;
  if (programAddress !== COMPUTE_BUDGET_PROGRAM || data[0] !== SET_COMPUTE_UNIT_PRICE || data.length < 9) {
    return refuse(ExactSvmReason.ComputePriceInstruction, 'the second instruction is not a compute unit price');
  }
  const microLamports = getU64Decoder().decode(data, 1);
  const bound = ours.maxComputeUnitPriceMicroLamports ?? MAX_COMPUTE_UNIT_PRICE_MICROLAMPORTS;
  if (microLamports > bound) {
    return refuse(ExactSvmReason.ComputePriceInstructionTooHigh, `a compute unit price of ${microLamports} micro-lamports; at most ${bound} is accepted`);
  }
  return undefined;
}

interface TransferChecked {
  readonly tokenProgram: Address;
  readonly source: Address;
  readonly mint: Address;
  readonly destination: Address;
  readonly authority: Address;
  readonly amount: bigint;
  readonly decimals: number;
}

/**
 * TransferChecked of SPL Token or Token-2022 (discriminator 12, a u64 amount and a u8 of decimals; accounts
 * source, mint, destination, authority, then a multisig authority's signers), as the reference reads it: at
 * least 10 bytes of data and 4 accounts, further ones ignored.
 */
function parseTransferChecked(instruction: DecodedSvmInstruction): TransferChecked | undefined {
  const { programAddress, data, accounts } = instruction;
  if (!isTokenProgram(programAddress) || data.length < 10 || data[0] !== TRANSFER_CHECKED || accounts.length < 4) return undefined;
  return {
    tokenProgram: programAddress,
    source: accounts[0].address,
    mint: accounts[1].address,
    destination: accounts[2].address,
    authority: accounts[3].address,
    amount: getU64Decoder().decode(data, 1),
    decimals: data[9],
  };
}

/**
 * None of our fee payers is invoked as a program or named in any instruction's accounts (the transfer's
 * source, a multisig signer, a Memo signer, a Lighthouse account): our signature then authorises nothing but
 * the network fee. The reference checks this on its smart-wallet path only, and there only the requirements'
 * fee payer; a fee payer of ours that is not this transaction's signs nothing, but is refused all the same.
 */
function checkFeePayersIsolated(instructions: readonly DecodedSvmInstruction[], feePayers: readonly string[]): ExactSvmRefusal | undefined {
  for (const [index, instruction] of instructions.entries()) {
    if (feePayers.includes(instruction.programAddress)) {
      return refuse(ExactSvmReason.FeePayerNotIsolated, `instruction ${index + 1} invokes fee payer ${instruction.programAddress} as a program`);
    }
    const named = instruction.accounts.find(({ address: account }) => feePayers.includes(account));
    if (named) {
      return refuse(ExactSvmReason.FeePayerNotIsolated, `instruction ${index + 1} (${instruction.programAddress}) names fee payer ${named.address} among its accounts`);
    }
  }
  return undefined;
}

/** The associated token account of (owner, mint, token program); undefined for an owner or mint that is no address (the reference then answers a recipient mismatch). */
async function associatedTokenAccount(owner: string, mint: string, tokenProgram: Address): Promise<Address | undefined> {
  try {
    const [ata] = await findAssociatedTokenPda({ owner: address(owner), mint: address(mint), tokenProgram });
    return ata;
  } catch {
    return undefined;
  }
}

async function signatureValid(signer: Address, signature: SignatureBytes, messageBytes: ReadonlyUint8Array): Promise<boolean> {
  try {
    return await verifySignature(await getPublicKeyFromAddress(signer), signature, messageBytes);
  } catch {
    return false;
  }
}

function integerOrUndefined(value: string): bigint | undefined {
  return /^\d+$/.test(value) ? BigInt(value) : undefined;
}
