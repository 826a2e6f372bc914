import {
  appendTransactionMessageInstructions,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Blockhash,
  type Instruction,
  type TransactionSigner,
} from '@solana/kit';
import type { LocalSolanaChain } from './local-solana-chain';

/** A v0 transaction of `instructions`, paid by `feePayer`, signed by every signer its instructions name, on the chain's latest blockhash; base64 wire bytes. */
export async function signedTransaction(chain: LocalSolanaChain, feePayer: TransactionSigner, instructions: Instruction[]): Promise<string> {
  const { blockhash, lastValidBlockHeight } = chain.latestBlockhash('processed');
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(feePayer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: blockhash as Blockhash, lastValidBlockHeight }, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
  return getBase64EncodedWireTransaction(await signTransactionMessageWithSigners(message));
}

/** Sends in-process (with preflight, so a failure throws with the logs) and returns the signature. */
export async function sendInstructions(chain: LocalSolanaChain, feePayer: TransactionSigner, instructions: Instruction[]): Promise<string> {
  return chain.send(Buffer.from(await signedTransaction(chain, feePayer, instructions), 'base64'));
}
