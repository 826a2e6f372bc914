import { LocalEd25519Signer } from '@facilitator/signers';
import {
  AccountRole,
  address,
  appendTransactionMessageInstructions,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  partiallySignTransactionMessageWithSigners,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  type Blockhash,
} from '@solana/kit';
import { getTransferCheckedInstruction } from '@solana-program/token';
import { kitPartialSigner } from './kit-signer';
import { decodeSvmWireTransaction } from './wire-transaction';

// The family's one reader of a payer's transaction (exact-svm's rules and the fee payer's signing read through
// it); its refusals of lookup tables and of what cannot be read are tested there too, in their own terms.

const [feePayer, payer] = [1, 2].map((byte) => new LocalEd25519Signer(new Uint8Array(32).fill(byte)));
const [mint, source, destination, blockhash] = [4, 5, 6, 8].map((byte) => address(new LocalEd25519Signer(new Uint8Array(32).fill(byte)).address));

async function payment(version: 0 | 'legacy'): Promise<string> {
  const transfer = getTransferCheckedInstruction({ source, mint, destination, authority: kitPartialSigner(payer), amount: 10_000n, decimals: 6 });
  const message = pipe(
    createTransactionMessage({ version }),
    (m) => setTransactionMessageFeePayer(address(feePayer.address), m),
    (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: blockhash as unknown as Blockhash, lastValidBlockHeight: 100n }, m),
    (m) => appendTransactionMessageInstructions([transfer], m),
  );
  return getBase64EncodedWireTransaction(await partiallySignTransactionMessageWithSigners(message));
}

describe('decodeSvmWireTransaction', () => {
  it.each([0, 'legacy'] as const)('reads a version %s payment: fee payer, signers in order (the fee payer unsigned), lifetime, instructions with their accounts', async (version) => {
    const decoded = decodeSvmWireTransaction(await payment(version));
    if (!decoded.ok) throw new Error(decoded.message);
    const { transaction } = decoded;
    expect(transaction).toMatchObject({ version, feePayer: feePayer.address, recentBlockhash: blockhash, header: { numSignerAccounts: 2 } });
    expect(transaction.staticAccounts[0]).toBe(feePayer.address);
    expect(transaction.signatures.map(({ signer }) => signer)).toEqual([feePayer.address, payer.address]);
    expect(transaction.signatures[0].signature).toBeNull();
    expect(transaction.signatures[1].signature).toHaveLength(64);
    expect(transaction.instructions).toHaveLength(1);
    const [transfer] = transaction.instructions;
    expect(transfer.accounts.map(({ address }) => address)).toEqual([source, mint, destination, payer.address]);
    expect(transfer.accounts[3].role).toBe(AccountRole.READONLY_SIGNER);
  });

  it('names why it cannot read a transaction: not base64 or not a transaction, or a message naming no account', () => {
    expect(decodeSvmWireTransaction('not a transaction')).toMatchObject({ ok: false, problem: 'undecodable' });
    expect(decodeSvmWireTransaction(Buffer.from([1, 2, 3]).toString('base64'))).toMatchObject({ ok: false, problem: 'undecodable' });
    // no signature; a legacy message: header 0 0 0, no account, a blockhash, no instruction
    const empty = Buffer.concat([Buffer.from([0, 0, 0, 0, 0]), Buffer.from(new Uint8Array(32).fill(7)), Buffer.from([0])]).toString('base64');
    expect(decodeSvmWireTransaction(empty)).toMatchObject({ ok: false, problem: 'no_accounts' });
  });
});
