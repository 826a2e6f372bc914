import type { Ed25519Signer } from '@facilitator/signers';
import { verifyEd25519 } from '@facilitator/signers';
import { getAddressEncoder, getBase58Decoder, getBase64Decoder, getTransactionEncoder, type SignatureBytes, type SignaturesMap, type Transaction } from '@solana/kit';
import { decodeSvmWireTransaction, type SvmTransactionDecodeProblem } from './wire-transaction';

/** Why a transaction is not signed as fee payer: the refusal names the problem, never a key. */
export type FeePayerSigningProblem =
  | 'undecodable'
  | 'unsupported_version'
  | 'address_lookup_tables'
  | 'fee_payer_mismatch'
  | 'fee_payer_in_instruction'
  | 'missing_signature'
  | 'invalid_signature';

export class FeePayerSigningRefused extends Error {
  constructor(
    readonly problem: FeePayerSigningProblem,
    message: string,
  ) {
    super(message);
    this.name = 'FeePayerSigningRefused';
  }
}

export interface FeePayerSigned {
  /** the transaction with every signature, base64 wire bytes */
  readonly transaction: string;
  /** the fee payer's signature, base58: the transaction's id, known before it is sent */
  readonly signature: string;
  /** the blockhash the payer's message carries: its lifetime */
  readonly blockhash: string;
}

const base64 = getBase64Decoder();
const base58 = getBase58Decoder();
const transactionEncoder = getTransactionEncoder();
const addressEncoder = getAddressEncoder();

/**
 * Adds the fee payer's signature to a payer's partially signed transaction, changing nothing else: the message
 * bytes go out as they came in, so every other signature stays valid. The transaction is read by the family's
 * one reader (wire-transaction.ts), as exact-svm's rules read it. This is not the payment's verification
 * (exact-svm's rules decide what may be paid); it is what the key itself insists on before it signs, since its
 * signature covers the whole message:
 * - the message names `feePayer` as its fee payer (its first account);
 * - no instruction names the fee payer, as program or account: every account of an instruction that is a
 *   message signer acts with that signature, so a transfer or approval from the fee payer, or its use as an
 *   authority, would be signed by us;
 * - no address lookup tables (their accounts cannot be seen without reading the chain) and legacy or v0 only;
 * - every other required signer has signed, and its signature verifies: the result is fully signed.
 */
export async function signAsFeePayer(transactionBase64: string, feePayer: Ed25519Signer): Promise<FeePayerSigned> {
  const decoded = decodeSvmWireTransaction(transactionBase64);
  if (!decoded.ok) throw refusalOf(decoded.problem, decoded.message, feePayer.address);
  const { transaction } = decoded;
  if (transaction.feePayer !== feePayer.address) {
    throw new FeePayerSigningRefused('fee_payer_mismatch', `the message's fee payer is ${transaction.feePayer}, not ${feePayer.address}`);
  }
  transaction.instructions.forEach((instruction, index) => {
    if (instruction.programAddress === feePayer.address || instruction.accounts.some((account) => account.address === feePayer.address)) {
      throw new FeePayerSigningRefused('fee_payer_in_instruction', `instruction ${index} names the fee payer ${feePayer.address}: its signature would authorise it`);
    }
  });
  const messageBytes = Uint8Array.from(transaction.messageBytes);
  for (const { signer, signature } of transaction.signatures.slice(1)) {
    if (!signature) throw new FeePayerSigningRefused('missing_signature', `required signer ${signer} has not signed`);
    if (!verifyEd25519(addressEncoder.encode(signer) as Uint8Array, messageBytes, signature as Uint8Array)) {
      throw new FeePayerSigningRefused('invalid_signature', `the signature of ${signer} does not verify`);
    }
  }
  const ours = (await feePayer.signMessage(messageBytes)) as SignatureBytes;
  // the signatures map keeps the message's signer order; only the fee payer's entry changes
  const signatures: SignaturesMap = Object.fromEntries(transaction.signatures.map(({ signer, signature }) => [signer, signer === transaction.feePayer ? ours : signature]));
  const signed: Transaction = { messageBytes: transaction.messageBytes as Transaction['messageBytes'], signatures };
  return { transaction: base64.decode(transactionEncoder.encode(signed)), signature: base58.decode(ours), blockhash: transaction.recentBlockhash };
}

/** A transaction the family's reader could not read, refused in the key's terms. */
function refusalOf(problem: SvmTransactionDecodeProblem, message: string, feePayer: string): FeePayerSigningRefused {
  // a message with no account names no fee payer: not ours
  if (problem === 'no_accounts') return new FeePayerSigningRefused('fee_payer_mismatch', `the message's fee payer is missing, not ${feePayer}`);
  return new FeePayerSigningRefused(problem, message);
}
