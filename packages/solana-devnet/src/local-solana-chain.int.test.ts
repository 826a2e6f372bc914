import {
  address,
  createKeyPairSignerFromBytes,
  createSolanaRpc,
  devnet as devnetUrl,
  getBase58Encoder,
  generateKeyPairSigner,
  getTransactionDecoder,
  lamports,
  isSolanaError,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE,
  SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND,
  type Base64EncodedWireTransaction,
  type TransactionMessageBytesBase64,
  type Signature,
} from '@solana/kit';
import { fetchToken, findAssociatedTokenPda, getCreateAssociatedTokenIdempotentInstructionAsync, getTransferCheckedInstruction, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { signedTransaction } from './chain-transactions';
import { DEVNET_USDC_MINT } from './dev-world';
import { startSolanaDevnet, type SolanaDevnet } from './solana-devnet';

// a devnet-branded url: kit's types then offer requestAirdrop, as for a test cluster
const rpcAt = (url: string) => createSolanaRpc(devnetUrl(url));

// The chain's clock is stopped (slotTimeMs 0): each test moves slots itself, so statuses and expiry are exact.
describe('LocalSolanaChain over JSON-RPC', () => {
  let devnet: SolanaDevnet;
  let rpc: ReturnType<typeof rpcAt>;

  beforeAll(async () => {
    devnet = await startSolanaDevnet({ slotTimeMs: 0 });
    rpc = rpcAt(devnet.chain.rpcUrl);
  });
  afterAll(() => devnet.stop());

  const mint = address(DEVNET_USDC_MINT);
  const balanceOf = async (tokenAccount: string) => BigInt((await rpc.getTokenAccountBalance(address(tokenAccount)).send()).value.amount);
  const status = async (signature: string) => (await rpc.getSignatureStatuses([signature as Signature]).send()).value[0];

  it("reads the blockhash, the payer's USDC and the merchant's delegate with kit's rpc", async () => {
    // kit asks at `confirmed` unless told otherwise; a node's own default is `finalized`
    const { value: latest } = await rpc.getLatestBlockhash().send();
    expect(latest.blockhash).toBe(devnet.chain.latestBlockhash('confirmed').blockhash);
    expect(latest.lastValidBlockHeight).toBe(devnet.chain.blockHeight('confirmed') + 150n);
    expect((await rpc.isBlockhashValid(latest.blockhash).send()).value).toBe(true);

    const { accounts, feeAllowance } = devnet.info;
    expect(await balanceOf(accounts.payer.tokenAccount)).toBe(1_000_000_000n);

    const merchantToken = await fetchToken(rpc, address(accounts.merchant.tokenAccount));
    expect(merchantToken.data.mint).toBe(mint);
    expect(merchantToken.data.owner).toBe(accounts.merchant.address);
    expect(merchantToken.data.delegate).toEqual({ __option: 'Some', value: accounts.treasury.address });
    expect(merchantToken.data.delegatedAmount).toBe(BigInt(feeAllowance));

    // the mint sits at the real devnet USDC address, under SPL Token, with 6 decimals
    const { value: mintAccount } = await rpc.getAccountInfo(mint, { encoding: 'jsonParsed' }).send();
    expect(mintAccount?.owner).toBe(TOKEN_PROGRAM_ADDRESS);
    expect(mintAccount?.data).toMatchObject({ program: 'spl-token', parsed: { type: 'mint', info: { decimals: 6, supply: '1100000000' } } });
    expect(await rpc.getGenesisHash().send()).toMatch(/^EtWTRABZaYq6iMfeYKouRu166VU2xqa1/);
    // the info file's secret keys are the keys of its addresses, in both forms
    for (const account of Object.values(accounts)) {
      expect((await createKeyPairSignerFromBytes(new Uint8Array(account.secretKeyBytes))).address).toBe(account.address);
      expect([...getBase58Encoder().encode(account.secretKey)]).toEqual(account.secretKeyBytes);
    }
  });

  it("collects a fee: the treasury's delegated TransferChecked from the merchant's token account lands and lowers the allowance", async () => {
    const { signers, tokenAccounts } = devnet.world;
    const treasury = signers.treasury;
    const [treasuryTokenAccount] = await findAssociatedTokenPda({ mint, owner: treasury.address, tokenProgram: TOKEN_PROGRAM_ADDRESS });
    const fee = 2_500n;
    const merchantBefore = await balanceOf(tokenAccounts.merchant);
    const transaction = await signedTransaction(devnet.chain, treasury, [
      await getCreateAssociatedTokenIdempotentInstructionAsync({ payer: treasury, owner: treasury.address, mint }),
      getTransferCheckedInstruction({ source: tokenAccounts.merchant, mint, destination: treasuryTokenAccount, authority: treasury, amount: fee, decimals: 6 }),
    ]);
    const signature = await rpc.sendTransaction(transaction as Base64EncodedWireTransaction, { encoding: 'base64' }).send();
    expect((await status(signature))?.confirmationStatus).toBe('processed');
    devnet.chain.advanceSlots(1);
    expect(await status(signature)).toMatchObject({ confirmationStatus: 'confirmed', err: null, confirmations: 1n });
    devnet.chain.advanceSlots(devnet.chain.finalizedAfterSlots);
    expect(await status(signature)).toMatchObject({ confirmationStatus: 'finalized', confirmations: null });

    expect(await balanceOf(tokenAccounts.merchant)).toBe(merchantBefore - fee);
    expect(await balanceOf(treasuryTokenAccount)).toBe(fee);
    const merchantToken = await fetchToken(rpc, tokenAccounts.merchant);
    expect(merchantToken.data.delegatedAmount).toBe(devnet.world.feeAllowance - fee);

    const landed = await rpc.getTransaction(signature, { encoding: 'json', maxSupportedTransactionVersion: 0 }).send();
    expect(landed?.meta?.err).toBeNull();
    expect(landed?.meta?.fee).toBe(5000n);
    // LiteSVM's SPL Token logs no instruction names; its invocation and success are there
    expect(landed?.meta?.logMessages).toEqual(expect.arrayContaining([`Program ${TOKEN_PROGRAM_ADDRESS} invoke [1]`, `Program ${TOKEN_PROGRAM_ADDRESS} success`]));
    const merchantIndex = landed!.transaction.message.accountKeys.indexOf(tokenAccounts.merchant);
    const merchantBalance = (list: readonly { accountIndex: number; uiTokenAmount: { amount: string } }[] | null | undefined) =>
      list?.find((entry) => entry.accountIndex === merchantIndex)?.uiTokenAmount.amount;
    expect(merchantBalance(landed?.meta?.preTokenBalances)).toBe(merchantBefore.toString());
    expect(merchantBalance(landed?.meta?.postTokenBalances)).toBe((merchantBefore - fee).toString());
  });

  it('refuses a transaction whose blockhash expired; a dropped send never shows in getSignatureStatuses', async () => {
    const { signers, tokenAccounts } = devnet.world;
    const transfer = () =>
      getTransferCheckedInstruction({ source: tokenAccounts.payer, mint, destination: tokenAccounts.merchant, authority: signers.payer, amount: 1n, decimals: 6 });
    const payerBefore = await balanceOf(tokenAccounts.payer);

    const stale = await signedTransaction(devnet.chain, signers.feePayer, [transfer()]);
    const { blockhash } = devnet.chain.latestBlockhash('processed');
    devnet.chain.advanceSlots(150);
    expect((await rpc.isBlockhashValid(blockhash as never, { commitment: 'processed' }).send()).value).toBe(true);
    devnet.chain.advanceSlots(1);
    expect((await rpc.isBlockhashValid(blockhash as never, { commitment: 'processed' }).send()).value).toBe(false);
    const refusal = await rpc
      .sendTransaction(stale as Base64EncodedWireTransaction, { encoding: 'base64' })
      .send()
      .catch((error: unknown) => error);
    expect(isSolanaError(refusal, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE)).toBe(true);
    expect(isSolanaError((refusal as Error).cause, SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND)).toBe(true);
    // without preflight a node takes it and the leader drops it: it never lands
    const skipped = await rpc.sendTransaction(stale as Base64EncodedWireTransaction, { encoding: 'base64', skipPreflight: true }).send();

    const fresh = await signedTransaction(devnet.chain, signers.feePayer, [transfer()]);
    await fetch(devnet.chain.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'devnet_dropNextSend', params: [] }) });
    const dropped = await rpc.sendTransaction(fresh as Base64EncodedWireTransaction, { encoding: 'base64' }).send();
    devnet.chain.advanceSlots(10);
    expect((await rpc.getSignatureStatuses([skipped, dropped]).send()).value).toEqual([null, null]);
    expect(await rpc.getTransaction(dropped, { commitment: 'confirmed', encoding: 'json', maxSupportedTransactionVersion: 0 }).send()).toBeNull();
    expect(await balanceOf(tokenAccounts.payer)).toBe(payerBefore);

    // the dropped transaction's blockhash is still valid: sent again, it lands
    await rpc.sendTransaction(fresh as Base64EncodedWireTransaction, { encoding: 'base64' }).send();
    expect(await balanceOf(tokenAccounts.payer)).toBe(payerBefore - 1n);
  });

  it('simulates a transfer its payer cannot fund: the error and the token program logs come back, nothing changes', async () => {
    const broke = await generateKeyPairSigner();
    const { signers, tokenAccounts } = devnet.world;
    const [brokeTokenAccount] = await findAssociatedTokenPda({ mint, owner: broke.address, tokenProgram: TOKEN_PROGRAM_ADDRESS });
    const create = await signedTransaction(devnet.chain, signers.feePayer, [
      await getCreateAssociatedTokenIdempotentInstructionAsync({ payer: signers.feePayer, owner: broke.address, mint }),
    ]);
    await rpc.sendTransaction(create as Base64EncodedWireTransaction, { encoding: 'base64' }).send();

    const transaction = await signedTransaction(devnet.chain, signers.feePayer, [
      getTransferCheckedInstruction({ source: brokeTokenAccount, mint, destination: tokenAccounts.merchant, authority: broke, amount: 10_000n, decimals: 6 }),
    ]);
    const { value } = await rpc.simulateTransaction(transaction as Base64EncodedWireTransaction, { encoding: 'base64', sigVerify: true }).send();
    expect(value.err).toEqual({ InstructionError: [0n, { Custom: 1n }] });
    expect(value.logs).toEqual(expect.arrayContaining(['Program log: Error: insufficient funds']));
    expect(value.unitsConsumed).toBeGreaterThan(0n);

    const refusal = await rpc
      .sendTransaction(transaction as Base64EncodedWireTransaction, { encoding: 'base64' })
      .send()
      .catch((error: unknown) => error);
    expect(isSolanaError(refusal, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE)).toBe(true);
    expect((refusal as { context: { logs: string[] } }).context.logs).toContain('Program log: Error: insufficient funds');
    expect(await balanceOf(brokeTokenAccount)).toBe(0n);

    // skipping preflight, it lands failed and pays its fee, like on a real cluster
    const feePayerBefore = (await rpc.getBalance(signers.feePayer.address).send()).value;
    const signature = await rpc.sendTransaction(transaction as Base64EncodedWireTransaction, { encoding: 'base64', skipPreflight: true }).send();
    devnet.chain.advanceSlots(1);
    expect(await status(signature)).toMatchObject({ confirmationStatus: 'confirmed', err: { InstructionError: [0n, { Custom: 1n }] } });
    // two signatures (fee payer and token owner) at 5,000 lamports each
    expect((await rpc.getBalance(signers.feePayer.address).send()).value).toBe(feePayerBefore - 10_000n);
    const landed = await rpc.getTransaction(signature, { commitment: 'confirmed', encoding: 'base64', maxSupportedTransactionVersion: 0 }).send();
    expect(landed?.meta).toMatchObject({ fee: 10_000n, err: { InstructionError: [0n, { Custom: 1n }] } });
    expect(landed?.transaction).toEqual([transaction, 'base64']);
  });

  it('answers the other reads kit types: several accounts, fees, airdrops, slots by commitment, owners\' token accounts, test controls', async () => {
    const { accounts } = devnet.info;
    const { signers, tokenAccounts } = devnet.world;
    const nobody = (await generateKeyPairSigner()).address;
    const { value: many } = await rpc.getMultipleAccounts([address(accounts.payer.tokenAccount), nobody], { encoding: 'base64' }).send();
    expect(many[0]?.owner).toBe(TOKEN_PROGRAM_ADDRESS);
    expect(many[1]).toBeNull();
    expect((await rpc.getBalance(nobody).send()).value).toBe(0n);
    expect(await rpc.getMinimumBalanceForRentExemption(165n).send()).toBe(2_039_280n);

    const transaction = await signedTransaction(devnet.chain, signers.feePayer, [
      getTransferCheckedInstruction({ source: tokenAccounts.payer, mint, destination: tokenAccounts.merchant, authority: signers.payer, amount: 1n, decimals: 6 }),
    ]);
    const message = Buffer.from(getTransactionDecoder().decode(Buffer.from(transaction, 'base64')).messageBytes).toString('base64');
    expect((await rpc.getFeeForMessage(message as TransactionMessageBytesBase64).send()).value).toBe(10_000n);
    // a simulation may swap in the latest blockhash (the signatures then no longer match, so no sigVerify)
    devnet.chain.advanceSlots(151);
    const { value: replaced } = await rpc
      .simulateTransaction(transaction as Base64EncodedWireTransaction, { encoding: 'base64', replaceRecentBlockhash: true })
      .send();
    expect(replaced.err).toBeNull();
    expect(replaced.replacementBlockhash?.blockhash).toBe(devnet.chain.latestBlockhash('processed').blockhash);
    expect((await rpc.getFeeForMessage(message as TransactionMessageBytesBase64).send()).value).toBeNull();

    const airdrop = await rpc.requestAirdrop(nobody, lamports(1_000_000_000n)).send();
    expect((await rpc.getBalance(nobody).send()).value).toBe(1_000_000_000n);
    expect(await status(airdrop)).toMatchObject({ confirmationStatus: 'processed', err: null });

    const processed = await rpc.getSlot({ commitment: 'processed' }).send();
    expect(await rpc.getSlot({ commitment: 'confirmed' }).send()).toBe(processed - 1n);
    expect(await rpc.getSlot({ commitment: 'finalized' }).send()).toBe(processed - BigInt(devnet.chain.finalizedAfterSlots));
    expect(await rpc.getBlockHeight({ commitment: 'processed' }).send()).toBe(processed);
    expect((await rpc.getEpochInfo({ commitment: 'processed' }).send()).absoluteSlot).toBe(processed);
    expect(await rpc.getHealth().send()).toBe('ok');
    expect((await rpc.getVersion().send())['solana-core']).toMatch(/^\d+\.\d+\.\d+$/);

    const { value: owned } = await rpc.getTokenAccountsByOwner(address(accounts.merchant.address), { mint }, { encoding: 'jsonParsed' }).send();
    expect(owned.map((entry) => entry.pubkey)).toEqual([accounts.merchant.tokenAccount]);

    // the controls a test in another process uses
    const control = (method: string, params: unknown[]) =>
      fetch(devnet.chain.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) }).then(
        (response) => response.json() as Promise<{ result: unknown }>,
      );
    expect((await control('devnet_advanceSlots', [3])).result).toBe(Number(processed) + 3);
    await control('devnet_setAccount', [{ address: nobody, lamports: 42, data: [Buffer.from([1, 2, 3]).toString('base64'), 'base64'], owner: '11111111111111111111111111111111' }]);
    const { value: written } = await rpc.getAccountInfo(nobody, { encoding: 'base64' }).send();
    expect(written).toMatchObject({ lamports: 42n, data: [Buffer.from([1, 2, 3]).toString('base64'), 'base64'] });
  });
});
