import type { Ed25519Signer } from '@facilitator/signers';
import { verifyEd25519 } from '@facilitator/signers';
import {
  getBase58Decoder,
  getBase64Decoder,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  getTransactionEncoder,
  getAddressEncoder,
  type SignatureBytes,
  type Transaction,
} from '@solana/kit';

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

const base64 = { encode: getBase64Encoder(), decode: getBase64Decoder() };
const base58 = getBase58Decoder();
const transactionDecoder = getTransactionDecoder();
const transactionEncoder = getTransactionEncoder();
const messageDecoder = getCompiledTransactionMessageDecoder();
const addressEncoder = getAddressEncoder();

/**
 * Adds the fee payer's signature to a payer's partially signed transaction, changing nothing else: the message
 * bytes go out as they came in, so every other signature stays valid. This is not the payment's verification
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
  let transaction: Transaction;
  let compiled: ReturnType<typeof messageDecoder.decode>;
  try {
    transaction = transactionDecoder.decode(base64.encode.encode(transactionBase64));
    compiled = messageDecoder.decode(transaction.messageBytes);
  } catch (error) {
    throw new FeePayerSigningRefused('undecodable', `the transaction could not be decoded: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (compiled.version !== 'legacy' && compiled.version !== 0) {
    throw new FeePayerSigningRefused('unsupported_version', `a version ${String(compiled.version)} message: only legacy and v0 messages are signed`);
  }
  if (compiled.version === 0 && (compiled.addressTableLookups?.length ?? 0) > 0) {
    throw new FeePayerSigningRefused('address_lookup_tables', 'the message loads accounts from address lookup tables');
  }
  const { staticAccounts, header } = compiled;
  if (staticAccounts[0] !== feePayer.address) {
    throw new FeePayerSigningRefused('fee_payer_mismatch', `the message's fee payer is ${staticAccounts[0] ?? 'missing'}, not ${feePayer.address}`);
  }
  compiled.instructions.forEach((instruction, index) => {
    if (instruction.programAddressIndex === 0 || (instruction.accountIndices ?? []).includes(0)) {
      throw new FeePayerSigningRefused('fee_payer_in_instruction', `instruction ${index} names the fee payer ${feePayer.address}: its signature would authorise it`);
    }
  });
  const messageBytes = Uint8Array.from(transaction.messageBytes);
  for (const signer of staticAccounts.slice(1, header.numSignerAccounts)) {
    const signature = transaction.signatures[signer];
    if (!signature) throw new FeePayerSigningRefused('missing_signature', `required signer ${signer} has not signed`);
    if (!verifyEd25519(addressEncoder.encode(signer) as Uint8Array, messageBytes, signature as Uint8Array)) {
      throw new FeePayerSigningRefused('invalid_signature', `the signature of ${signer} does not verify`);
    }
  }
  const ours = (await feePayer.signMessage(messageBytes)) as SignatureBytes;
  // the signatures map keeps the message's signer order; only the fee payer's entry changes
  const signed: Transaction = { messageBytes: transaction.messageBytes, signatures: { ...transaction.signatures, [staticAccounts[0]]: ours } };
  return { transaction: base64.decode.decode(transactionEncoder.encode(signed)), signature: base58.decode(ours), blockhash: compiled.lifetimeToken };
}
