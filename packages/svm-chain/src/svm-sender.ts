import type { Ed25519Signer } from '@facilitator/signers';
import { getBase58Decoder, getBase64Encoder, getTransactionDecoder, type Base64EncodedWireTransaction } from '@solana/kit';
import { READ_COMMITMENT } from './commitments';
import { signAsFeePayer, type FeePayerSigned } from './fee-payer-signing';
import { sendRefusalOf } from './send-refusal';
import { RpcSvmReads, type SvmReads, type SvmRpc } from './svm-reads';
import { outcomeOf, type SvmLifetime, type SvmTransactionOutcome } from './transaction-outcome';

/**
 * Sending on a Solana network (the counterpart of evm-sending for EVM). A port: RpcSvmSender is the JSON-RPC
 * implementation. The transaction's id is its first (fee payer's) signature, known before it is sent, so the
 * caller persists it first and can always ask for its outcome after a crash. Nothing here waits or loops: each
 * call reads or sends once, and the caller schedules the next poll.
 */
export interface SvmSender {
  /** the payer's transaction with our fee payer's signature added (see fee-payer-signing.ts for what is refused) */
  signAsFeePayer(transaction: string, feePayer: Ed25519Signer): Promise<FeePayerSigned>;
  /**
   * Sends a fully signed base64 transaction and answers its signature. With preflight (the default) a
   * transaction that would fail is refused (SvmSendRefused) and charges nothing; a transaction that already
   * landed answers its signature (a resend is safe). Any other error leaves it unknown whether it was sent.
   * `maxRetries`: how long the node itself rebroadcasts (its default: until the blockhash expires); 0 leaves
   * every rebroadcast to the caller, who then resends the same bytes at each poll while the outcome is pending.
   */
  send(transaction: string, options?: SvmSendOptions): Promise<string>;
  /** where the transaction stands now, given its lifetime (one status read, and the reads expiry needs) */
  outcome(signature: string, lifetime: SvmLifetime): Promise<SvmTransactionOutcome>;
}

export interface SvmSendOptions {
  /** false by default: the node simulates first (at `confirmed`) and refuses a transaction that would fail */
  readonly skipPreflight?: boolean;
  readonly maxRetries?: bigint;
}

const base64 = getBase64Encoder();
const base58 = getBase58Decoder();
const transactionDecoder = getTransactionDecoder();

export class RpcSvmSender implements SvmSender {
  readonly reads: SvmReads;
  private readonly rpc: SvmRpc;

  constructor(rpc: string | SvmRpc, reads?: SvmReads) {
    const rpcReads = new RpcSvmReads(rpc);
    this.rpc = rpcReads.rpc;
    this.reads = reads ?? rpcReads;
  }

  signAsFeePayer(transaction: string, feePayer: Ed25519Signer): Promise<FeePayerSigned> {
    return signAsFeePayer(transaction, feePayer);
  }

  async send(transaction: string, options: SvmSendOptions = {}): Promise<string> {
    try {
      return await this.rpc
        .sendTransaction(transaction as Base64EncodedWireTransaction, {
          encoding: 'base64',
          skipPreflight: options.skipPreflight ?? false,
          preflightCommitment: READ_COMMITMENT.preflight,
          ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
        })
        .send();
    } catch (error) {
      const refusal = sendRefusalOf(error);
      if (refusal === 'already_processed') return signatureOf(transaction);
      throw refusal ?? error;
    }
  }

  async outcome(signature: string, lifetime: SvmLifetime): Promise<SvmTransactionOutcome> {
    // expiry first, then the status (transaction-outcome.ts says why this order)
    const expired =
      'lastValidBlockHeight' in lifetime
        ? (await this.reads.blockHeight(READ_COMMITMENT.expiryBlockHeight)) > lifetime.lastValidBlockHeight
        : !(await this.reads.blockhashValid(lifetime.blockhash));
    let status = await this.reads.signatureStatus(signature);
    // the recent status cache holds about 300 slots: an expired transaction is only unknown once history says so too
    if (!status && expired) status = await this.reads.signatureStatus(signature, { searchTransactionHistory: true });
    return outcomeOf(status, expired);
  }
}

/** The transaction's id: its first signature (the fee payer's), base58. */
export function signatureOf(transaction: string): string {
  const decoded = transactionDecoder.decode(base64.encode(transaction));
  const first = Object.values(decoded.signatures)[0];
  if (!first) throw new Error('the transaction has no fee payer signature');
  return base58.decode(first);
}
