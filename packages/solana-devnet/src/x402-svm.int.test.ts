import {
  address,
  createSolanaRpc,
  getBase64EncodedWireTransaction,
  getTransactionDecoder,
  partiallySignTransaction,
  type Base64EncodedWireTransaction,
  type KeyPairSigner,
  type Signature,
} from '@solana/kit';
import { stockSvmPayment, stockSvmRequirements } from '@facilitator/solana-devnet/testing';
import { toFacilitatorSvmSigner } from '@x402/svm';
import { ExactSvmScheme as ExactSvmFacilitator } from '@x402/svm/exact/facilitator';
import { SOLANA_DEVNET_NETWORK } from './dev-world';
import { startSolanaDevnet, type SolanaDevnet } from './solana-devnet';

type FacilitatorSvmSigner = ConstructorParameters<typeof ExactSvmFacilitator>[0];

/**
 * A FacilitatorSvmSigner over the chain's JSON-RPC with kit, sending WITH preflight (the stock
 * toFacilitatorSvmSigner skips it): the shape our facilitator's Solana signer will take.
 */
function kitFacilitatorSigner(rpcUrl: string, feePayer: KeyPairSigner): FacilitatorSvmSigner {
  const rpc = createSolanaRpc(rpcUrl);
  return {
    getAddresses: () => [feePayer.address],
    signTransaction: async (transaction, payer) => {
      if (payer !== feePayer.address) throw new Error(`no key for fee payer ${payer}`);
      const decoded = getTransactionDecoder().decode(Buffer.from(transaction, 'base64'));
      return getBase64EncodedWireTransaction(await partiallySignTransaction([feePayer.keyPair], decoded));
    },
    simulateTransaction: async (transaction) => {
      const { value } = await rpc
        .simulateTransaction(transaction as Base64EncodedWireTransaction, { encoding: 'base64', sigVerify: false, replaceRecentBlockhash: false, commitment: 'confirmed' })
        .send();
      if (value.err) throw new Error(`Simulation failed: ${JSON.stringify(value.err, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))}`);
    },
    sendTransaction: (transaction) => rpc.sendTransaction(transaction as Base64EncodedWireTransaction, { encoding: 'base64', preflightCommitment: 'confirmed' }).send(),
    confirmTransaction: async (signature) => {
      for (const deadline = Date.now() + 10_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 50))) {
        const [status] = (await rpc.getSignatureStatuses([signature as Signature]).send()).value;
        if (status?.err) throw new Error(`failed on chain: ${JSON.stringify(status.err)}`);
        if (status?.confirmationStatus === 'confirmed' || status?.confirmationStatus === 'finalized') return;
      }
      throw new Error('not confirmed in 10 s');
    },
  };
}

describe('the stock @x402/svm client and reference facilitator against the local chain', () => {
  let devnet: SolanaDevnet;
  let rpc: ReturnType<typeof createSolanaRpc>;
  // a fast clock: the facilitator waits for `confirmed`, one slot after landing
  beforeAll(async () => {
    devnet = await startSolanaDevnet({ slotTimeMs: 50 });
    rpc = createSolanaRpc(devnet.chain.rpcUrl);
  });
  afterAll(() => devnet.stop());

  const requirements = () => stockSvmRequirements(devnet);
  const balanceOf = async (tokenAccount: string) => BigInt((await rpc.getTokenAccountBalance(address(tokenAccount)).send()).value.amount);
  const callsDuring = async <T>(run: () => Promise<T>): Promise<[T, string[]]> => {
    devnet.chain.rpcCalls.clear();
    const result = await run();
    return [result, [...devnet.chain.rpcCalls.keys()].sort()];
  };

  async function payAndSettle(signer: FacilitatorSvmSigner) {
    const { signers, tokenAccounts } = devnet.world;
    const [created, clientCalls] = await callsDuring(() => stockSvmPayment(devnet));
    const payload = { x402Version: 2, accepted: requirements(), resource: { url: 'http://merchant.test/paid', description: '', mimeType: '' }, payload: created.payload };

    const facilitator = new ExactSvmFacilitator(signer);
    const before = { payer: await balanceOf(tokenAccounts.payer), merchant: await balanceOf(tokenAccounts.merchant) };
    const [verified, verifyCalls] = await callsDuring(() => facilitator.verify(payload, requirements()));
    expect(verified).toMatchObject({ isValid: true, payer: signers.payer.address });
    const [settled, settleCalls] = await callsDuring(() => facilitator.settle(payload, requirements()));
    expect(settled).toMatchObject({ success: true, network: SOLANA_DEVNET_NETWORK, payer: signers.payer.address });

    expect(await balanceOf(tokenAccounts.merchant)).toBe(before.merchant + 10_000n);
    expect(await balanceOf(tokenAccounts.payer)).toBe(before.payer - 10_000n);
    const signature = settled.transaction as Signature;
    const [confirmed] = (await rpc.getSignatureStatuses([signature]).send()).value;
    expect(['confirmed', 'finalized']).toContain(confirmed?.confirmationStatus);
    await waitFor(async () => (await rpc.getSignatureStatuses([signature]).send()).value[0]?.confirmationStatus === 'finalized');
    const landed = await rpc.getTransaction(signature, { encoding: 'json', maxSupportedTransactionVersion: 0 }).send();
    expect(landed?.meta?.err).toBeNull();
    // the stock client's Memo instruction ran (SPL Memo v2: 16 random bytes as 32 hex characters)
    // the stock client's Memo instruction ran (SPL Memo v2; 16 random bytes written as 32 hex characters)
    expect(landed?.meta?.logMessages).toEqual(expect.arrayContaining(['Program log: Memo (len 32)', expect.stringMatching(/^Program log: [0-9a-f]{32}$/)]));
    expect(landed?.transaction.message.accountKeys[0]).toBe(devnet.info.accounts.feePayer.address);
    return { clientCalls, verifyCalls, settleCalls, facilitator, payload };
  }

  it('pays with the stock client; the reference facilitator verifies and settles through a kit signer over JSON-RPC', async () => {
    const { clientCalls, verifyCalls, settleCalls } = await payAndSettle(kitFacilitatorSigner(devnet.chain.rpcUrl, devnet.world.signers.feePayer));
    expect(clientCalls).toEqual(['getAccountInfo', 'getLatestBlockhash']);
    expect(verifyCalls).toEqual(['simulateTransaction']);
    expect(settleCalls).toEqual(['getSignatureStatuses', 'sendTransaction', 'simulateTransaction']);
  });

  it("settles through the stock toFacilitatorSvmSigner too (no preflight), and refuses the same payload again", async () => {
    const signer = toFacilitatorSvmSigner(devnet.world.signers.feePayer, { defaultRpcUrl: devnet.chain.rpcUrl });
    const { settleCalls, facilitator, payload } = await payAndSettle(signer);
    expect(settleCalls).toEqual(['getSignatureStatuses', 'sendTransaction', 'simulateTransaction']);
    const merchantBefore = await balanceOf(devnet.world.tokenAccounts.merchant);
    expect(await facilitator.settle(payload, requirements())).toMatchObject({ success: false, errorReason: 'duplicate_settlement' });
    expect(await balanceOf(devnet.world.tokenAccounts.merchant)).toBe(merchantBefore);
  });
});

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 25))) {
    if (await condition()) return;
  }
  throw new Error('condition not met in time');
}
