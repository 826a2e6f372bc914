import { startSolanaDevnet, type SolanaDevnet } from '@facilitator/solana-devnet';
import { stockSvmPayment, stockSvmRequirements } from '@facilitator/solana-devnet/testing';
import { createSolanaRpc, type Address, type Base64EncodedWireTransaction } from '@solana/kit';
import { ExactSvmScheme as ExactSvmFacilitator } from '@x402/svm/exact/facilitator';
import { mintProblem, payToAccountProblem, type SvmAccountFacts } from './chain-facts';
import { checkExactSvmTransaction } from './rules';

// The rules and the chain facts beside them, on the local Solana chain (LiteSVM behind JSON-RPC): the stock
// client's payment passes all of them and its simulation; a payTo without a token account, which the
// reference answers only as a failed simulation, is refused by payToAccountProblem in so many words.

describe('exact on Solana against the local chain', () => {
  let devnet: SolanaDevnet;
  let rpc: ReturnType<typeof createSolanaRpc>;
  beforeAll(async () => {
    devnet = await startSolanaDevnet({ slotTimeMs: 50 });
    rpc = createSolanaRpc(devnet.chain.rpcUrl);
  });
  afterAll(() => devnet.stop());

  const requirementsFor = (payTo: string) => stockSvmRequirements(devnet, { payTo });
  const ours = () => ({ feePayers: [devnet.info.accounts.feePayer.address] });
  const accountFacts = async (account: Address): Promise<SvmAccountFacts | null> => {
    const { value } = await rpc.getAccountInfo(account, { encoding: 'base64' }).send();
    return value ? { owner: value.owner, data: Buffer.from(value.data[0], 'base64') } : null;
  };
  const simulationError = async (transaction: string) =>
    (await rpc.simulateTransaction(transaction as Base64EncodedWireTransaction, { encoding: 'base64', sigVerify: false, replaceRecentBlockhash: false }).send()).value.err;
  const pay = async (payTo: string) => (await stockSvmPayment(devnet, { payTo })).transaction;
  const referenceVerify = (transaction: string, payTo: string) => {
    const signer = {
      getAddresses: () => [devnet.world.signers.feePayer.address],
      simulateTransaction: async (tx: string) => {
        const err = await simulationError(tx);
        if (err) throw new Error(`Simulation failed: ${JSON.stringify(err)}`);
      },
    };
    const requirements = requirementsFor(payTo);
    const payload = { x402Version: 2, accepted: requirements, resource: { url: 'http://merchant.test/paid', description: '', mimeType: '' }, payload: { transaction } };
    return new ExactSvmFacilitator(signer as never).verify(payload as never, requirements as never);
  };

  it('the stock payment to the merchant passes the rules, the chain facts and its simulation', async () => {
    const payTo = devnet.info.accounts.merchant.address;
    const transaction = await pay(payTo);
    const verdict = await checkExactSvmTransaction(transaction, requirementsFor(payTo), ours());
    if (!verdict.ok) throw new Error(verdict.message);
    expect(verdict.terms).toMatchObject({ payer: devnet.world.signers.payer.address, destination: devnet.world.tokenAccounts.merchant, amount: 10_000n });
    expect(payToAccountProblem(await accountFacts(verdict.terms.destination), { ...verdict.terms })).toBeUndefined();
    expect(mintProblem(await accountFacts(verdict.terms.mint))).toBeUndefined();
    expect(await simulationError(transaction)).toBeNull();
    expect(await referenceVerify(transaction, payTo)).toMatchObject({ isValid: true });
  });

  it('a payTo without a token account: the reference answers a failed simulation, payToAccountProblem says why', async () => {
    // the treasury holds SOL but no USDC account
    const payTo = devnet.info.accounts.treasury.address;
    const transaction = await pay(payTo);
    const verdict = await checkExactSvmTransaction(transaction, requirementsFor(payTo), ours());
    if (!verdict.ok) throw new Error(verdict.message);
    expect(await accountFacts(verdict.terms.destination)).toBeNull();
    expect(payToAccountProblem(null, verdict.terms)).toMatchObject({ ok: false, reason: 'invalid_payment_requirements', problem: 'pay_to_token_account_missing' });
    expect(await referenceVerify(transaction, payTo)).toMatchObject({ isValid: false, invalidReason: 'invalid_exact_svm_transaction_simulation_failed' });
  });
});
