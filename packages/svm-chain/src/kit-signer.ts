import type { Ed25519Signer } from '@facilitator/signers';
import { address, type SignatureBytes, type TransactionPartialSigner } from '@solana/kit';

/**
 * An Ed25519Signer (a local key or an HSM's) as kit's TransactionPartialSigner: it signs each transaction's
 * message bytes and changes nothing else, so kit's signTransactionMessageWithSigners can collect the treasury's
 * and the fee payer's signatures wherever their keys live.
 */
export function kitPartialSigner(signer: Ed25519Signer): TransactionPartialSigner {
  const signerAddress = address(signer.address);
  return {
    address: signerAddress,
    async signTransactions(transactions) {
      const signatures = [];
      // one at a time: an HSM signer with one session queues them anyway
      for (const transaction of transactions) {
        signatures.push({ [signerAddress]: (await signer.signMessage(Uint8Array.from(transaction.messageBytes))) as SignatureBytes });
      }
      return signatures;
    },
  };
}
