// SvmSender against the local Solana chain (packages/solana-devnet, in this process): the stock @x402/svm
// client's payment signed by our fee payer (a local key, and an Ed25519 key in SoftHSM2), sent, and followed
// to confirmed and finalized; a dropped send found expired; what the fee payer's key refuses to sign; a
// transaction that fails on chain.
import { LocalEd25519Signer, createEd25519Signer, type Ed25519Signer } from '@facilitator/signers';
import { createSoftHsmToken, type SoftHsmToken } from '@facilitator/signers/testing';
import { DEVNET_USDC_MINT, startSolanaDevnet, type SolanaDevnet } from '@facilitator/solana-devnet';
import { stockSvmPayment } from '@facilitator/solana-devnet/testing';
import { describeNeeding, softhsmMissing } from '../../../test/support/system-tools';
import { FeePayerSigningRefused } from './fee-payer-signing';
import { feeTransferTransaction } from './fee-transfer';
import { TOKEN_PROGRAM } from './programs';
import { SvmSendRefused } from './send-refusal';
import { RpcSvmSender } from './svm-sender';

let devnet: SolanaDevnet;
let sender: RpcSvmSender;

// the clock is stopped: slots move only when a test says so, so statuses and expiry are exact
beforeAll(async () => {
  devnet = await startSolanaDevnet({ slotTimeMs: 0 });
  sender = new RpcSvmSender(devnet.chain.rpcUrl);
});
afterAll(() => devnet.stop());

const localFeePayer = () => new LocalEd25519Signer(devnet.info.accounts.feePayer.secretKey);
const treasury = () => new LocalEd25519Signer(devnet.info.accounts.treasury.secretKey);

/** The stock client's payment of 10,000 (a cent) to the merchant, with `feePayer` as the requirements' extra.feePayer: a partially signed base64 transaction. */
async function stockPayment(feePayer: string): Promise<string> {
  return (await stockSvmPayment(devnet, { feePayer })).transaction;
}

const usdcOf = async (tokenAccount: string) => (await sender.reads.tokenAccount(tokenAccount))?.amount ?? 0n;

/** Signs the stock payment as fee payer, sends it and follows it, slot by slot, to finalized. */
async function payThrough(feePayer: Ed25519Signer) {
  const { accounts } = devnet.info;
  const before = { payer: await usdcOf(accounts.payer.tokenAccount), merchant: await usdcOf(accounts.merchant.tokenAccount) };
  const signed = await sender.signAsFeePayer(await stockPayment(feePayer.address), feePayer);
  // a simulation of the fully signed transaction, signatures checked, passes
  expect((await sender.reads.simulate(signed.transaction, { sigVerify: true })).err).toBeNull();
  expect(await sender.send(signed.transaction)).toBe(signed.signature);
  const lifetime = { blockhash: signed.blockhash };
  expect(await sender.outcome(signed.signature, lifetime)).toBe('pending');
  devnet.chain.advanceSlots(1);
  expect(await sender.outcome(signed.signature, lifetime)).toBe('confirmed');
  devnet.chain.advanceSlots(devnet.chain.finalizedAfterSlots);
  expect(await sender.outcome(signed.signature, lifetime)).toBe('finalized');
  expect(await usdcOf(accounts.payer.tokenAccount)).toBe(before.payer - 10_000n);
  expect(await usdcOf(accounts.merchant.tokenAccount)).toBe(before.merchant + 10_000n);
  const landed = await sender.reads.transaction(signed.signature, 'finalized');
  // two signatures at 5,000 lamports, and the stock client's priority fee (its compute-unit price times limit, rounded up)
  expect(landed?.err).toBeNull();
  expect(landed?.fee).toBeGreaterThanOrEqual(10_000n);
  expect(landed?.tokenBalanceChanges).toEqual([
    { account: accounts.payer.tokenAccount, mint: DEVNET_USDC_MINT, owner: accounts.payer.address, pre: before.payer, post: before.payer - 10_000n },
    { account: accounts.merchant.tokenAccount, mint: DEVNET_USDC_MINT, owner: accounts.merchant.address, pre: before.merchant, post: before.merchant + 10_000n },
  ]);
  // a resend of the same bytes (after a crash, say) answers the same signature and moves nothing again
  expect(await sender.send(signed.transaction)).toBe(signed.signature);
  expect(await usdcOf(accounts.merchant.tokenAccount)).toBe(before.merchant + 10_000n);
  return { signed, networkFee: landed!.fee };
}

describe('RpcSvmSender on the local Solana chain', () => {
  it('signs the stock x402 payment as fee payer with a local key, sends it, and follows it to confirmed then finalized', async () => {
    const feePayer = localFeePayer();
    const solBefore = await sender.reads.solBalance(feePayer.address);
    const { networkFee } = await payThrough(feePayer);
    // the fee payer paid the network fee
    expect(await sender.reads.solBalance(feePayer.address)).toBe(solBefore - networkFee);
  });

  it('refuses to sign a payment whose fee payer is another key', async () => {
    const other = new LocalEd25519Signer(new Uint8Array(32).fill(9));
    const payment = await stockPayment(devnet.info.accounts.feePayer.address);
    const refusal = await sender.signAsFeePayer(payment, other).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(FeePayerSigningRefused);
    expect(refusal).toMatchObject({ problem: 'fee_payer_mismatch' });
  });

  it('finds a dropped transaction expired once its blockhash can no longer land, by last valid block height or by blockhash', async () => {
    const fee = await feeTransferTransaction({
      merchant: devnet.info.accounts.merchant.address,
      mint: DEVNET_USDC_MINT,
      tokenProgram: TOKEN_PROGRAM,
      treasury: treasury(),
      feePayer: localFeePayer(),
      amount: 1_000n,
      decimals: 6,
      blockhash: await sender.reads.latestBlockhash(),
      createTreasuryTokenAccount: true,
    });
    const payment = await sender.signAsFeePayer(await stockPayment(devnet.info.accounts.feePayer.address), localFeePayer());
    devnet.chain.dropNextSend(2);
    expect(await sender.send(fee.transaction)).toBe(fee.signature);
    expect(await sender.send(payment.transaction)).toBe(payment.signature);
    const byHeight = { lastValidBlockHeight: fee.lastValidBlockHeight };
    const byBlockhash = { blockhash: payment.blockhash };
    devnet.chain.advanceSlots(devnet.chain.blockhashMaxAgeSlots - 1);
    // still valid: it might yet land
    expect(await sender.outcome(fee.signature, byHeight)).toBe('pending');
    expect(await sender.outcome(payment.signature, byBlockhash)).toBe('pending');
    devnet.chain.advanceSlots(2);
    expect(await sender.outcome(payment.signature, byBlockhash)).toBe('expired');
    // by height, expiry waits for the finalized chain to pass the last valid block height
    expect(await sender.outcome(fee.signature, byHeight)).toBe('pending');
    devnet.chain.advanceSlots(devnet.chain.finalizedAfterSlots);
    expect(await sender.outcome(fee.signature, byHeight)).toBe('expired');
    // and a resend of an expired transaction is refused, charging nothing
    const refusal = await sender.send(payment.transaction).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(SvmSendRefused);
    expect(refusal).toMatchObject({ kind: 'blockhash_not_found' });
  });

  it('a transaction that would fail is refused by preflight; sent without it, it lands failed and its outcome says so', async () => {
    // a fee above the merchant's allowance: the token program refuses the delegate's transfer
    const tooMuch = await feeTransferTransaction({
      merchant: devnet.info.accounts.merchant.address,
      mint: DEVNET_USDC_MINT,
      tokenProgram: TOKEN_PROGRAM,
      treasury: treasury(),
      feePayer: localFeePayer(),
      amount: BigInt(devnet.info.feeAllowance) + 1n,
      decimals: 6,
      blockhash: await sender.reads.latestBlockhash(),
      createTreasuryTokenAccount: true,
    });
    // (kit reads the node's numbers as bigints)
    expect((await sender.reads.simulate(tooMuch.transaction)).err).toEqual({ InstructionError: [1n, { Custom: 1n }] });
    const refusal = await sender.send(tooMuch.transaction).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(SvmSendRefused);
    expect(refusal).toMatchObject({ kind: 'simulation_failed', logs: expect.arrayContaining([expect.stringContaining('insufficient funds')]) });
    expect(await sender.reads.signatureStatus(tooMuch.signature)).toBeUndefined();

    expect(await sender.send(tooMuch.transaction, { skipPreflight: true })).toBe(tooMuch.signature);
    const lifetime = { lastValidBlockHeight: tooMuch.lastValidBlockHeight };
    expect(await sender.outcome(tooMuch.signature, lifetime)).toBe('pending');
    devnet.chain.advanceSlots(1);
    expect(await sender.outcome(tooMuch.signature, lifetime)).toEqual({ failed: { InstructionError: [1n, { Custom: 1n }] }, finalized: false });
    devnet.chain.advanceSlots(devnet.chain.finalizedAfterSlots);
    expect(await sender.outcome(tooMuch.signature, lifetime)).toEqual({ failed: { InstructionError: [1n, { Custom: 1n }] }, finalized: true });
    // it paid its network fee (two signatures: the fee payer's and the treasury's) and moved no token
    const landed = await sender.reads.transaction(tooMuch.signature);
    expect(landed).toMatchObject({ err: { InstructionError: [1n, { Custom: 1n }] }, fee: 10_000n });
    expect(landed?.tokenBalanceChanges.every((change) => change.pre === change.post)).toBe(true);
  });
});

describeNeeding(softhsmMissing(), 'RpcSvmSender with the fee payer in SoftHSM2', () => {
  let token: SoftHsmToken;
  let feePayer: Ed25519Signer;

  beforeAll(async () => {
    token = await createSoftHsmToken({ label: `svm-chain-${Date.now()}` });
    const key = await token.generateKey('fee-payer', { curve: 'ed25519' });
    feePayer = await createEd25519Signer(key.uri);
    expect(feePayer.address).toBe(key.address);
    devnet.chain.airdrop(feePayer.address, 1_000_000_000n);
  });
  afterAll(async () => {
    await feePayer?.close();
    await token?.destroy();
  });

  it('signs the stock x402 payment as fee payer with a key that never leaves the token; it lands and finalizes', async () => {
    expect(feePayer.backend).toBe('pkcs11');
    const { networkFee } = await payThrough(feePayer);
    expect(await sender.reads.solBalance(feePayer.address)).toBe(1_000_000_000n - networkFee);
  });
});
