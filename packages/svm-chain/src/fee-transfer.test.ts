import { LocalEd25519Signer, verifyEd25519 } from '@facilitator/signers';
import { address, getBase64Encoder, getCompiledTransactionMessageDecoder, getTransactionDecoder, getUtf8Decoder, type Address } from '@solana/kit';
import { findAssociatedTokenPda, TRANSFER_CHECKED_DISCRIMINATOR, parseTransferCheckedInstruction, ASSOCIATED_TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { feeTransferTransaction, type FeeTransferRequest } from './fee-transfer';
import { COMPUTE_BUDGET_PROGRAM, MEMO_PROGRAM, TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from './programs';

const signerOf = (byte: number) => new LocalEd25519Signer(new Uint8Array(32).fill(byte));
const feePayer = signerOf(1);
const treasury = signerOf(2);
const merchant = signerOf(3).address;
const mint = signerOf(4).address;
const blockhash = { blockhash: signerOf(5).address, lastValidBlockHeight: 321n };

const request = (overrides: Partial<FeeTransferRequest> = {}): FeeTransferRequest => ({
  merchant,
  mint,
  tokenProgram: TOKEN_PROGRAM,
  treasury,
  feePayer,
  amount: 10_000n,
  decimals: 6,
  blockhash,
  ...overrides,
});

function read(transaction: string) {
  const decoded = getTransactionDecoder().decode(getBase64Encoder().encode(transaction));
  const message = getCompiledTransactionMessageDecoder().decode(decoded.messageBytes);
  if (message.version !== 0) throw new Error('not v0');
  const programs = message.instructions.map((ix) => message.staticAccounts[ix.programAddressIndex]);
  return { decoded, message, programs };
}

const ata = async (owner: string, tokenProgram: string = TOKEN_PROGRAM) =>
  (await findAssociatedTokenPda({ owner: address(owner), mint: address(mint), tokenProgram: address(tokenProgram) }))[0];

describe('feeTransferTransaction', () => {
  it("is one TransferChecked from the merchant's token account to the treasury's, by the treasury as delegate, paid by our fee payer, both signed", async () => {
    const fee = await feeTransferTransaction(request());
    const { decoded, message, programs } = read(fee.transaction);
    expect(message.addressTableLookups ?? []).toEqual([]);
    expect(message.staticAccounts[0]).toBe(feePayer.address);
    expect(message.lifetimeToken).toBe(blockhash.blockhash);
    expect(programs).toEqual([TOKEN_PROGRAM]);
    expect(fee.source).toBe(await ata(merchant));
    expect(fee.destination).toBe(await ata(treasury.address));
    const [ix] = message.instructions;
    const transfer = parseTransferCheckedInstruction({
      programAddress: TOKEN_PROGRAM,
      accounts: ix.accountIndices!.map((i) => ({ address: message.staticAccounts[i] as Address, role: 0 })),
      data: ix.data!,
    });
    expect(transfer.data).toMatchObject({ discriminator: TRANSFER_CHECKED_DISCRIMINATOR, amount: 10_000n, decimals: 6 });
    expect(transfer.accounts.source.address).toBe(fee.source);
    expect(transfer.accounts.mint.address).toBe(mint);
    expect(transfer.accounts.destination.address).toBe(fee.destination);
    expect(transfer.accounts.authority.address).toBe(treasury.address);
    // the fee payer signs first (its signature is the id), the treasury too
    expect(Object.keys(decoded.signatures)).toEqual([feePayer.address, treasury.address]);
    for (const signer of [feePayer, treasury]) {
      expect(verifyEd25519(signer.publicKey, Uint8Array.from(decoded.messageBytes), Uint8Array.from(decoded.signatures[signer.address as Address]!))).toBe(true);
    }
    expect(fee.lastValidBlockHeight).toBe(321n);
  });

  it("creates the treasury's token account first when asked, carries a memo and a priority fee when given, and works for Token-2022", async () => {
    const fee = await feeTransferTransaction(
      request({ tokenProgram: TOKEN_2022_PROGRAM, createTreasuryTokenAccount: true, memo: 'fee of 5x', computeUnitLimit: 40_000, computeUnitPriceMicroLamports: 1_000n }),
    );
    const { message, programs } = read(fee.transaction);
    expect(programs).toEqual([COMPUTE_BUDGET_PROGRAM, COMPUTE_BUDGET_PROGRAM, ASSOCIATED_TOKEN_PROGRAM_ADDRESS, TOKEN_2022_PROGRAM, MEMO_PROGRAM]);
    expect(fee.destination).toBe(await ata(treasury.address, TOKEN_2022_PROGRAM));
    expect([...message.instructions[0].data!]).toEqual([2, 0x40, 0x9c, 0, 0]);
    expect([...message.instructions[1].data!]).toEqual([3, 0xe8, 0x03, 0, 0, 0, 0, 0, 0]);
    // the idempotent create (instruction 1 of the associated token program) is paid by the fee payer
    const create = message.instructions[2];
    expect([...create.data!]).toEqual([1]);
    expect(message.staticAccounts[create.accountIndices![0]]).toBe(feePayer.address);
    expect(getUtf8Decoder().decode(message.instructions[4].data!)).toBe('fee of 5x');
  });

  it('signs once when the treasury is also the fee payer, and refuses what is not a fee', async () => {
    const fee = await feeTransferTransaction(request({ treasury: feePayer }));
    expect(Object.keys(read(fee.transaction).decoded.signatures)).toEqual([feePayer.address]);
    await expect(feeTransferTransaction(request({ amount: 0n }))).rejects.toThrow('positive');
    await expect(feeTransferTransaction(request({ tokenProgram: '11111111111111111111111111111111' }))).rejects.toThrow('not SPL Token');
  });
});
