// The fee, first, on the local Solana chain: the treasury, as the merchant's SPL delegate, takes the flat fee
// from the merchant's token account in its own transaction before the payer's, and the allowance goes down by it.
import { LocalEd25519Signer } from '@facilitator/signers';
import { DEVNET_USDC_MINT, sendInstructions, startSolanaDevnet, type SolanaDevnet } from '@facilitator/solana-devnet';
import { stockSvmPayment } from '@facilitator/solana-devnet/testing';
import { address } from '@solana/kit';
import { getApproveCheckedInstruction } from '@solana-program/token';
import { delegatedFeeAllowance } from './fee-allowance';
import { feeTransferTransaction } from './fee-transfer';
import { TOKEN_PROGRAM } from './programs';
import { RpcSvmSender } from './svm-sender';

const FEE = 10_000n;
const PRICE = 250_000n;

describe('the fee transfer on the local Solana chain', () => {
  let devnet: SolanaDevnet;
  let sender: RpcSvmSender;

  beforeAll(async () => {
    devnet = await startSolanaDevnet({ slotTimeMs: 0 });
    sender = new RpcSvmSender(devnet.chain.rpcUrl);
  });
  afterAll(() => devnet.stop());

  const feePayer = () => new LocalEd25519Signer(devnet.info.accounts.feePayer.secretKey);
  const treasury = () => new LocalEd25519Signer(devnet.info.accounts.treasury.secretKey);
  const allowanceQuery = () => ({ merchant: devnet.info.accounts.merchant.address, mint: DEVNET_USDC_MINT, treasury: devnet.info.accounts.treasury.address, tokenProgram: TOKEN_PROGRAM });
  const usdcOf = async (tokenAccount: string) => (await sender.reads.tokenAccount(tokenAccount))?.amount ?? 0n;

  const stockPayment = async () => (await stockSvmPayment(devnet, { amount: PRICE })).transaction;

  it("collects the fee before the payer's transaction: the allowance falls by the fee, the treasury's new token account holds it", async () => {
    const { accounts } = devnet.info;
    const allowanceBefore = await delegatedFeeAllowance(sender.reads, allowanceQuery());
    expect(allowanceBefore).toMatchObject({ status: 'delegated', allowance: BigInt(devnet.info.feeAllowance) });
    const merchantBefore = await usdcOf(accounts.merchant.tokenAccount);

    // the payer's transaction is signed (and so fixed) first; the fee goes out before it
    const payment = await sender.signAsFeePayer(await stockPayment(), feePayer());
    const fee = await feeTransferTransaction({
      merchant: accounts.merchant.address,
      mint: DEVNET_USDC_MINT,
      tokenProgram: TOKEN_PROGRAM,
      treasury: treasury(),
      feePayer: feePayer(),
      amount: FEE,
      decimals: 6,
      blockhash: await sender.reads.latestBlockhash(),
      createTreasuryTokenAccount: true,
      memo: `x402 fee of ${payment.signature}`,
    });
    expect(fee.source).toBe(accounts.merchant.tokenAccount);
    expect(fee.destination).toBe(await sender.reads.associatedTokenAccount(accounts.treasury.address, DEVNET_USDC_MINT, TOKEN_PROGRAM));
    expect(await sender.send(fee.transaction)).toBe(fee.signature);
    devnet.chain.advanceSlots(1);
    expect(await sender.outcome(fee.signature, { lastValidBlockHeight: fee.lastValidBlockHeight })).toBe('confirmed');

    expect(await sender.send(payment.transaction)).toBe(payment.signature);
    devnet.chain.advanceSlots(1);
    expect(await sender.outcome(payment.signature, { blockhash: payment.blockhash })).toBe('confirmed');

    const [feeLanded, paymentLanded] = [await sender.reads.transaction(fee.signature), await sender.reads.transaction(payment.signature)];
    expect(feeLanded!.slot).toBeLessThan(paymentLanded!.slot);
    // (in the message's account order)
    expect(feeLanded!.tokenBalanceChanges).toHaveLength(2);
    expect(feeLanded!.tokenBalanceChanges).toEqual(
      expect.arrayContaining([
        { account: accounts.merchant.tokenAccount, mint: DEVNET_USDC_MINT, owner: accounts.merchant.address, pre: merchantBefore, post: merchantBefore - FEE },
        // made by the transaction: no balance before
        { account: fee.destination, mint: DEVNET_USDC_MINT, owner: accounts.treasury.address, pre: 0n, post: FEE },
      ]),
    );
    expect(await delegatedFeeAllowance(sender.reads, allowanceQuery())).toMatchObject({ status: 'delegated', allowance: allowanceBefore.allowance - FEE });
    expect(await usdcOf(fee.destination)).toBe(FEE);
    expect(await usdcOf(accounts.merchant.tokenAccount)).toBe(merchantBefore - FEE + PRICE);

    // the next fee finds the treasury's account there (creating it again is a no-op, and not asked for here)
    const second = await feeTransferTransaction({
      merchant: accounts.merchant.address,
      mint: DEVNET_USDC_MINT,
      tokenProgram: TOKEN_PROGRAM,
      treasury: treasury(),
      feePayer: feePayer(),
      amount: FEE,
      decimals: 6,
      blockhash: await sender.reads.latestBlockhash(),
    });
    await sender.send(second.transaction);
    devnet.chain.advanceSlots(1);
    expect(await sender.outcome(second.signature, { lastValidBlockHeight: second.lastValidBlockHeight })).toBe('confirmed');
    expect(await usdcOf(fee.destination)).toBe(2n * FEE);
  });

  it('says when the merchant approved someone else: a token account has one delegate, and the treasury is no longer it', async () => {
    const { signers, tokenAccounts } = devnet.world;
    const someoneElse = address(new LocalEd25519Signer(new Uint8Array(32).fill(3)).address);
    await sendInstructions(devnet.chain, signers.merchant, [
      getApproveCheckedInstruction({ source: tokenAccounts.merchant, mint: address(DEVNET_USDC_MINT), delegate: someoneElse, owner: signers.merchant, amount: 5_000n, decimals: 6 }),
    ]);
    devnet.chain.advanceSlots(1);
    expect(await delegatedFeeAllowance(sender.reads, allowanceQuery())).toMatchObject({ status: 'other_delegate', allowance: 0n, delegate: someoneElse, delegatedAmount: 5_000n });
  });
});
