import { LocalEd25519Signer, verifyEd25519 } from '@facilitator/signers';
import {
  AccountRole,
  address,
  appendTransactionMessageInstructions,
  compressTransactionMessageUsingAddressLookupTables,
  createTransactionMessage,
  getAddressEncoder,
  getBase58Encoder,
  getBase64Encoder,
  getTransactionDecoder,
  partiallySignTransactionMessageWithSigners,
  getBase64EncodedWireTransaction,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  type Address,
  type Blockhash,
  type Instruction,
} from '@solana/kit';
import { getTransferCheckedInstruction } from '@solana-program/token';
import { FeePayerSigningRefused, signAsFeePayer } from './fee-payer-signing';
import { kitPartialSigner } from './kit-signer';

const feePayer = new LocalEd25519Signer(new Uint8Array(32).fill(1));
const payer = new LocalEd25519Signer(new Uint8Array(32).fill(2));
const stranger = new LocalEd25519Signer(new Uint8Array(32).fill(3));
const [mint, source, destination] = [4, 5, 6].map((byte) => addressOf(byte));
const BLOCKHASH = addressOf(8) as unknown as Blockhash;

function addressOf(byte: number): Address {
  return address(new LocalEd25519Signer(new Uint8Array(32).fill(byte)).address);
}

const payment = () => getTransferCheckedInstruction({ source, mint, destination, authority: kitPartialSigner(payer), amount: 10_000n, decimals: 6 });

/** A v0 message paid by `feePayerAddress` with `instructions`, signed by every signer but the fee payer: what a payer sends. */
async function partiallySigned(instructions: Instruction[], feePayerAddress: string = feePayer.address, lookupTables = {}): Promise<string> {
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayer(address(feePayerAddress), m),
    (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: BLOCKHASH, lastValidBlockHeight: 100n }, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
    (m) => compressTransactionMessageUsingAddressLookupTables(m, lookupTables),
  );
  return getBase64EncodedWireTransaction(await partiallySignTransactionMessageWithSigners(message));
}

const decode = (transaction: string) => getTransactionDecoder().decode(getBase64Encoder().encode(transaction));

async function refusal(run: Promise<unknown>): Promise<FeePayerSigningRefused> {
  const error = await run.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(FeePayerSigningRefused);
  return error as FeePayerSigningRefused;
}

describe('signAsFeePayer', () => {
  it("adds the fee payer's signature and changes nothing else: the message bytes and the payer's signature stay", async () => {
    const incoming = await partiallySigned([payment()]);
    const signed = await signAsFeePayer(incoming, feePayer);
    const before = decode(incoming);
    const after = decode(signed.transaction);
    expect(after.messageBytes).toEqual(before.messageBytes);
    expect(Object.keys(after.signatures)).toEqual([feePayer.address, payer.address]);
    expect(after.signatures[payer.address as Address]).toEqual(before.signatures[payer.address as Address]);
    const ours = after.signatures[feePayer.address as Address]!;
    expect(verifyEd25519(feePayer.publicKey, Uint8Array.from(after.messageBytes), Uint8Array.from(ours))).toBe(true);
    // the id is the fee payer's signature, in base58; the blockhash is the message's
    expect(Uint8Array.from(getBase58Encoder().encode(signed.signature))).toEqual(Uint8Array.from(ours));
    expect(signed.blockhash).toBe(BLOCKHASH);
    // only the fee payer's 64 bytes differ on the wire
    const [inBytes, outBytes] = [Buffer.from(incoming, 'base64'), Buffer.from(signed.transaction, 'base64')];
    expect(outBytes.length).toBe(inBytes.length);
    expect([...outBytes].map((b, i) => b !== inBytes[i]).lastIndexOf(true)).toBeLessThan(1 + 64);
  });

  it('refuses a message whose fee payer is another key', async () => {
    const incoming = await partiallySigned([payment()], stranger.address);
    expect(await refusal(signAsFeePayer(incoming, feePayer))).toMatchObject({ problem: 'fee_payer_mismatch' });
  });

  it('refuses a message in which an instruction names the fee payer (a transfer it would authorise, or any account of it)', async () => {
    const fromFeePayer: Instruction = {
      programAddress: address('11111111111111111111111111111111'),
      accounts: [
        { address: address(feePayer.address), role: AccountRole.WRITABLE_SIGNER },
        { address: destination, role: AccountRole.WRITABLE },
      ],
      data: new Uint8Array([2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]),
    };
    expect(await refusal(signAsFeePayer(await partiallySigned([payment(), fromFeePayer]), feePayer))).toMatchObject({ problem: 'fee_payer_in_instruction' });
    const asReadonlyAccount: Instruction = { programAddress: address('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr'), accounts: [{ address: address(feePayer.address), role: AccountRole.READONLY }] };
    expect(await refusal(signAsFeePayer(await partiallySigned([payment(), asReadonlyAccount]), feePayer))).toMatchObject({ problem: 'fee_payer_in_instruction' });
  });

  it("refuses a message the payer has not signed, or whose payer's signature does not verify", async () => {
    const unsigned = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayer(address(feePayer.address), m),
      (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: BLOCKHASH, lastValidBlockHeight: 100n }, m),
      // a required signer named by its address alone: nobody signs for it
      (m) => appendTransactionMessageInstructions([{ programAddress: address('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr'), accounts: [{ address: addressOf(2), role: AccountRole.READONLY_SIGNER }] }], m),
    );
    const incoming = getBase64EncodedWireTransaction(await partiallySignTransactionMessageWithSigners(unsigned));
    expect(await refusal(signAsFeePayer(incoming, feePayer))).toMatchObject({ problem: 'missing_signature' });

    const tampered = Buffer.from(await partiallySigned([payment()]), 'base64');
    // the payer's signature is the second: after the count byte and the fee payer's 64 bytes
    tampered[1 + 64 + 5] ^= 0xff;
    expect(await refusal(signAsFeePayer(tampered.toString('base64'), feePayer))).toMatchObject({ problem: 'invalid_signature' });
  });

  it('refuses address lookup tables and what cannot be decoded', async () => {
    const table = addressOf(9);
    const withTable = await partiallySigned([payment()], feePayer.address, { [table]: [destination] });
    expect(decode(withTable).messageBytes.length).toBeGreaterThan(0);
    expect(await refusal(signAsFeePayer(withTable, feePayer))).toMatchObject({ problem: 'address_lookup_tables' });
    expect(await refusal(signAsFeePayer('not a transaction', feePayer))).toMatchObject({ problem: 'undecodable' });
    expect(await refusal(signAsFeePayer(Buffer.from([1, 2, 3]).toString('base64'), feePayer))).toMatchObject({ problem: 'undecodable' });
    // a message naming no account names no fee payer, so not ours
    const empty = Buffer.concat([Buffer.from([0, 0, 0, 0, 0]), Buffer.from(new Uint8Array(32).fill(7)), Buffer.from([0])]).toString('base64');
    expect(await refusal(signAsFeePayer(empty, feePayer))).toMatchObject({ problem: 'fee_payer_mismatch' });
  });

  it('signs the same message to the same signature (Ed25519 is deterministic): signing again after a crash gives the same id', async () => {
    const incoming = await partiallySigned([payment()]);
    expect((await signAsFeePayer(incoming, feePayer)).signature).toBe((await signAsFeePayer(incoming, feePayer)).signature);
    expect(getAddressEncoder().encode(address(feePayer.address))).toEqual(feePayer.publicKey);
  });
});
