import { getBytes, id, recoverAddress } from 'ethers';
import { isLowS } from './recoverable-signature';
import type { Signer } from './signer';
import { SignerError, signerErrorOf } from './signer-error';

/**
 * What `checkSigner` signs: the hash of a fixed sentence, which is neither a transaction's, typed data's
 * nor an authorization's digest (each of those hashes a prefixed encoding), so this signature authorizes
 * nothing if it leaks.
 */
const SIGNER_CHECK_DIGEST = getBytes(id('x402 facilitator: signer check (authorizes nothing)'));

/**
 * Start-up check that a signer can sign and signs as its address: one signature of a fixed digest,
 * recovered and compared. A failure is a SignerError whose message is one line naming the signer.
 */
export async function checkSigner(signer: Signer): Promise<void> {
  let signature;
  try {
    signature = await signer.signDigest(SIGNER_CHECK_DIGEST);
  } catch (error) {
    throw signerErrorOf(signer.description, error, 'cannot sign');
  }
  if (!isLowS(signature) || (signature.v !== 27 && signature.v !== 28)) {
    throw new SignerError(signer.description, 'its signature is not in Ethereum form (low s, v 27 or 28)');
  }
  const recovered = recoverAddress(SIGNER_CHECK_DIGEST, signature);
  if (recovered !== signer.address) throw new SignerError(signer.description, `its signature recovers to ${recovered}, not to its address ${signer.address}`);
}
