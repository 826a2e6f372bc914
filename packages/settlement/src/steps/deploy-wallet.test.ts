import { UntrustedCallTimeoutError, wrapErc6492Signature } from '@facilitator/evm-chain';
import { Interface } from 'ethers';
import { AMOUNT, ERC6492_SIGNATURE, FACTORY, FEE, PLAIN_SIGNATURE, settlementFixture, stepHarness } from '../testing/fakes';
import { deployWallet } from './deploy-wallet';
import { preflight } from './preflight';
import type { StepResult } from '../step-outcome';

const SAFE_FACTORY = new Interface(['function createProxyWithNonce(address,bytes,uint256)']);
const COINBASE_FACTORY = new Interface(['function createAccount(bytes[],uint256)']);
const FOREIGN_SINGLETON = '0x' + '9a'.repeat(20);

function erc6492(factoryCalldata?: string) {
  const signature = factoryCalldata ? wrapErc6492Signature(FACTORY, factoryCalldata, PLAIN_SIGNATURE) : ERC6492_SIGNATURE;
  return stepHarness(settlementFixture({}, { signature }));
}

function refusal(result: unknown): Record<string, unknown> {
  const r = result as StepResult;
  expect(r.to).toBe('failed');
  expect(r.data).toMatchObject({ paymentKey: null, errorDetails: { fee_status: 'not_collected', merchant_charged: false, payer_kind: 'erc6492' } });
  return r.data!.errorDetails as Record<string, unknown>;
}

describe('an ERC-6492 wallet is deployed at our expense only when', () => {
  it('every check passes: then one deployment is reserved for the merchant and the factory', async () => {
    const h = erc6492();
    expect(await preflight(h.ctx)).toMatchObject({ to: 'deploying_wallet' });
    expect(h.walletDeployments.reserved).toEqual([expect.objectContaining({ settlementId: 'stl_1', factory: FACTORY })]);
    // the cheap reads first, the stranger's code after, the reservation last
    const order = h.log.filter((l) => /balanceOf|allowance|simulateDeployment|estimate|reserve/.test(l)).map((l) => l.replace(/\(.*/, ''));
    expect(order.slice(-3)).toEqual(['guard.simulateDeployment', 'chain.estimate', 'guard.reserve']);
  });

  it('the Safe singleton it would deploy is on the allowlist (fresh salts with a foreign singleton deploy nothing)', async () => {
    const h = erc6492(SAFE_FACTORY.encodeFunctionData('createProxyWithNonce', [FOREIGN_SINGLETON, '0x', 7n]));
    const d = refusal(await preflight(h.ctx));
    expect(d).toMatchObject({ reason: 'the wallet implementation the factory would deploy is not on the allowlist', implementation: FOREIGN_SINGLETON });
    expect(h.walletDeployments.reserved).toEqual([]);
    expect(h.log.some((l) => l.includes('simulateDeployment'))).toBe(false);
  });

  it("a Coinbase-style factory's own implementation() is on the allowlist", async () => {
    const call = COINBASE_FACTORY.encodeFunctionData('createAccount', [['0x' + '11'.repeat(32)], 0n]);
    const h = erc6492(call);
    expect(await preflight(h.ctx)).toMatchObject({ to: 'deploying_wallet' });
    const foreign = erc6492(call);
    foreign.walletDeployments.implementation = FOREIGN_SINGLETON;
    expect(refusal(await preflight(foreign.ctx)).implementation).toBe(FOREIGN_SINGLETON);
  });

  it('the payment would not be refused after it: not on the sequential path (contract payers refused there), nor for a paused payer', async () => {
    const signature = ERC6492_SIGNATURE;
    const sequential = stepHarness(settlementFixture({}, { signature }), { accounting: true });
    expect(refusal(await preflight(sequential.ctx))).toMatchObject({ reason: 'a contract-wallet payer is settled only on the atomic path' });
    expect(sequential.walletDeployments.reserved).toEqual([]);
    expect(sequential.log.some((l) => l.includes('simulateDeployment'))).toBe(false);

    const atomic = stepHarness(settlementFixture({}, { signature }), { accounting: true });
    atomic.ctx.policy.networkPath = 'atomic';
    expect(await preflight(atomic.ctx)).toMatchObject({ to: 'deploying_wallet' });

    const paused = stepHarness(settlementFixture({}, { signature }), { accounting: true });
    paused.ctx.policy.networkPath = 'atomic';
    paused.accounting!.payerFailures = { count: 3, lastAt: new Date() };
    expect(await preflight(paused.ctx)).toMatchObject({ to: 'failed', data: { errorDetails: { paused: 'payer', merchant_charged: false } } });
    expect(paused.walletDeployments.reserved).toEqual([]);
  });

  it('the factory call is one we can read', async () => {
    const d = refusal(await preflight(erc6492('0xdeadbeef').ctx));
    expect(String(d.reason)).toMatch(/is not one we know/);
  });

  it('the counterfactual wallet holds the payment (an unfunded one costs nothing)', async () => {
    const h = erc6492();
    h.chain.balance = AMOUNT - 1n;
    expect(refusal(await preflight(h.ctx))).toMatchObject({ reason: 'the counterfactual wallet does not hold the payment' });
    expect(h.walletDeployments.reserved).toEqual([]);
  });

  it("the merchant's allowance covers the fee", async () => {
    const h = erc6492();
    h.chain.allowanceOf = FEE - 1n;
    expect(refusal(await preflight(h.ctx))).toMatchObject({ reason: "the merchant's allowance to the treasury does not cover the fee" });
  });

  it('deploying and then transferring pass together in one simulation, each within its cap', async () => {
    const h = erc6492();
    h.walletDeployments.simulation = { stage: 'transfer', reason: 'FiatTokenV2: invalid signature' };
    expect(refusal(await preflight(h.ctx))).toMatchObject({ reason: 'FiatTokenV2: invalid signature', stage: 'transfer', simulation: 'wallet deployment and transfer' });
    const costly = erc6492();
    costly.walletDeployments.simulation = { deployGas: 250_000n, transferGas: 10_000_000n };
    expect(refusal(await preflight(costly.ctx))).toMatchObject({ reason: 'transfer gas estimate is above its cap' });
  });

  it('the probe runs as the real transactions: within their caps and at the market gas price (issue 40, 4)', async () => {
    const h = erc6492();
    expect(await preflight(h.ctx)).toMatchObject({ to: 'deploying_wallet' });
    const caps = h.ctx.network.gasCaps;
    const [probe] = h.walletDeployments.probeTransactions;
    // a wallet that says yes only at tx.gasprice 0, or an initializer that burns the node's own gas cap, is
    // judged as the real deployment and transfer would be: never more gas than both caps (and calldata) allow
    expect(probe.maxFeePerGasCap).toBe(h.transactions.fee.maxFeePerGasCap);
    expect(probe.gasLimit).toBeGreaterThan(caps.walletDeploy + caps.contractTransfer);
    expect(probe.gasLimit).toBeLessThan(caps.walletDeploy + caps.contractTransfer + 200_000n);
    // and the factory call's own estimate too
    const factoryEstimate = h.chain.estimateOptions.find((c) => c.to === FACTORY);
    expect(factoryEstimate?.options).toEqual({ gasLimit: caps.walletDeploy, maxFeePerGasCap: h.transactions.fee.maxFeePerGasCap });
  });

  it("a failed probe counts against the wallet's and the merchant's probe budgets; a spent budget runs no stranger's code (issue 40, 4)", async () => {
    const h = erc6492();
    h.walletDeployments.simulation = { stage: 'transfer', reason: 'FiatTokenV2: invalid signature' };
    refusal(await preflight(h.ctx));
    expect(h.walletDeployments.failedProbes).toEqual([expect.objectContaining({ settlementId: 'stl_1', factory: FACTORY, merchant: h.ctx.settlement.merchant.toLowerCase() })]);
    expect(h.walletDeployments.reserved).toEqual([]);

    const spent = erc6492();
    spent.walletDeployments.probes = { allowed: false, limit: 'wallet', count: 2, max: 2 };
    expect(refusal(await preflight(spent.ctx))).toMatchObject({ reason: 'wallet deployment probes limit reached for this wallet', probes: 2, max: 2 });
    expect(spent.log.some((l) => l.includes('simulateDeployment'))).toBe(false);
    expect(spent.log.some((l) => l.includes('chain.estimate'))).toBe(false);
  });

  it("a factory whose deployment estimate does not finish in time: refused and counted as a failed probe, not retried (issue 40, 4)", async () => {
    const h = erc6492();
    const estimate = h.chain.estimate.bind(h.chain);
    h.chain.estimate = async (from, data, to, options) => {
      if (to === FACTORY) throw new UntrustedCallTimeoutError('eth_estimateGas', 3_000);
      return estimate(from, data, to, options);
    };
    expect(refusal(await preflight(h.ctx))).toMatchObject({ reason: 'the wallet deployment estimate did not finish in time', simulation: 'wallet deployment' });
    expect(h.walletDeployments.failedProbes).toHaveLength(1);
    expect(h.walletDeployments.reserved).toEqual([]);
  });

  it('the merchant and the factory are within their deployment limits', async () => {
    const h = erc6492();
    h.walletDeployments.reservation = { reserved: false, limit: 'factory', count: 50, max: 50 };
    expect(refusal(await preflight(h.ctx))).toMatchObject({ reason: 'wallet deployments limit reached for this factory', deployments: 50, max: 50 });
  });

  it('the worker has the checks at all', async () => {
    const h = erc6492();
    h.ctx.policy.walletDeployments = undefined;
    expect(refusal(await preflight(h.ctx)).reason).toMatch(/deploys no wallets/);
  });

  it('and still pass right before the deployment is sent (the balance left meanwhile: nothing sent)', async () => {
    const h = stepHarness(settlementFixture({ state: 'deploying_wallet' }, { signature: ERC6492_SIGNATURE }));
    h.chain.balance = 0n;
    refusal(await deployWallet(h.ctx));
    expect(h.transactions.sent).toEqual([]);
    // its reservation goes back: the limits count deployments paid for, not refused ones a stranger can make
    expect(h.walletDeployments.released).toEqual(['stl_1']);
  });

  // issue 40 (review): a database writer inserts a row straight into deploying_wallet, past the pre-flight's reservation
  it('and a row that reached deploying_wallet without a reservation takes one before sending, within the limits', async () => {
    const reserving = stepHarness(settlementFixture({ state: 'deploying_wallet' }, { signature: ERC6492_SIGNATURE }));
    await deployWallet(reserving.ctx);
    expect(reserving.walletDeployments.reserved.map((r) => r.settlementId)).toEqual(['stl_1']);
    expect(reserving.transactions.sent.map((tx) => tx.purpose)).toEqual(['wallet_deploy']);

    const h = stepHarness(settlementFixture({ state: 'deploying_wallet' }, { signature: ERC6492_SIGNATURE }));
    h.walletDeployments.reservation = { reserved: false, limit: 'merchant', count: 3, max: 3 };
    expect(refusal(await deployWallet(h.ctx))).toMatchObject({ reason: 'wallet deployments limit reached for this merchant', deployments: 3, max: 3 });
    expect(h.transactions.sent).toEqual([]);
  });
});
