import { JsonRpcError, UntrustedCallTimeoutError, type SimulationOptions } from '@facilitator/evm-chain';
import { GAS_CAPS, PAYER, RELAYER_A, RELAYER_B, settlementFixture, stepHarness } from '../testing/fakes';
import { directCallOf, paymentOf } from '../payment';
import { preflight, transferGasCap } from './preflight';
import { Wallet } from 'ethers';
import { domainSeparator } from '@facilitator/core';
import { exactEip3009, type ExactEip3009Payload } from '@facilitator/payment-mechanisms';
import { isWait } from '../step-outcome';
import { SettlementWaitReason } from '../wait-reasons';

// The pre-flight simulates the transfer as it will be sent (issue 22): what it asks the chain, and what it
// makes of a simulation that cannot run. The rest of the pre-flight: steps.test.ts.

/** A harness whose chain records each estimate's options and answers with `answer(from)`. */
function simulating(answer: (from: string) => Promise<{ gas: bigint } | { revert: string; outOfGas?: bigint }>) {
  const h = stepHarness();
  const asked: Array<{ from: string; options?: SimulationOptions }> = [];
  h.chain.estimate = async (from: string, _data: string, _to?: string, options?: SimulationOptions) => {
    asked.push({ from, options });
    return answer(from);
  };
  return { h, asked };
}

describe('preflight of a settlement whose verification was rejected after it was copied', () => {
  it('fails before asking the chain anything or sending anything', async () => {
    const h = stepHarness(settlementFixture({}, { status: 'rejected' }));
    expect(await preflight(h.ctx)).toMatchObject({ to: 'failed', data: { errorDetails: { reason: 'the verification of this payment was rejected' } } });
    expect(h.log).toEqual([]);
    expect(h.transactions.sent).toEqual([]);
  });
});

describe('preflight simulates the transfer as it will be sent', () => {
  it('with the fee fields capped as signing caps them, and the gas cap of the payer kind (with its calldata) as its gas limit', async () => {
    const { h, asked } = simulating(async () => ({ gas: 60_000n }));
    expect(await preflight(h.ctx)).toMatchObject({ to: 'check_allowance' });
    const eoaCap = await transferGasCap(h.ctx, directCallOf(h.ctx.settlement, h.ctx.network.usdc));
    expect(eoaCap.gas).toBeGreaterThan(GAS_CAPS.transfer); // the calldata counted on top of the execution cap
    expect(asked).toEqual([{ from: RELAYER_A, options: { gasLimit: eoaCap.gas, maxFeePerGasCap: h.transactions.fee.maxFeePerGasCap } }]);

    h.chain.withCode.add(PAYER);
    await preflight(h.ctx);
    expect(asked[1].options?.gasLimit).toBe((await transferGasCap(h.ctx, directCallOf(h.ctx.settlement, h.ctx.network.usdc))).gas);
    expect(asked[1].options?.gasLimit).toBe(GAS_CAPS.contractTransfer + eoaCap.gas - GAS_CAPS.transfer);
  });

  it('a simulation that needs more than the gas limit is above the cap, before any fee', async () => {
    const { h } = simulating(async () => ({ revert: 'out of gas', outOfGas: GAS_CAPS.contractTransfer }));
    h.chain.withCode.add(PAYER);
    const result = await preflight(h.ctx);
    expect(result).toMatchObject({ to: 'failed', data: { errorDetails: { reason: 'transfer gas estimate is above its cap', gas_estimate: `above ${GAS_CAPS.contractTransfer}`, payer_kind: 'contract' } } });
    expect(h.transactions.sent).toEqual([]);
  });

  it("a contract wallet's simulation that does not finish in time is refused; an ordinary key's is retried", async () => {
    const timeout = () => Promise.reject(new UntrustedCallTimeoutError('eth_estimateGas', 3_000));
    const contract = simulating(timeout);
    contract.h.chain.withCode.add(PAYER);
    expect(await preflight(contract.h.ctx)).toMatchObject({ to: 'failed', data: { errorDetails: { reason: 'the transfer simulation did not finish in time' } } });
    const eoa = simulating(timeout);
    await expect(preflight(eoa.h.ctx)).rejects.toBeInstanceOf(UntrustedCallTimeoutError);
  });

  it('a relayer without ETH for the fee fields is passed over for the next; none at all waits for one', async () => {
    const broke = new JsonRpcError('insufficient funds for gas * price + value', -32000);
    const { h, asked } = simulating(async (from) => (from === RELAYER_A ? Promise.reject(broke) : { gas: 60_000n }));
    expect(await preflight(h.ctx)).toMatchObject({ to: 'check_allowance' });
    expect(asked.map((a) => a.from)).toEqual([RELAYER_A, RELAYER_B]);

    const none = simulating(() => Promise.reject(broke));
    const result = await preflight(none.h.ctx);
    expect(isWait(result) && result.wait.reason).toBe(SettlementWaitReason.NoFundedRelayer);
  });
});

describe('preflight on the atomic path (issue 41, item 1)', () => {
  const atomic = { overrides: { networkPath: 'atomic' as const }, accounting: true };
  const separator = domainSeparator({ name: 'USD Coin', version: '2', chainId: 84532, verifyingContract: '0x' + '5'.repeat(40) });

  /** The fixtures' payment from a real key, signed under `separator`, with `signature` replaced when given. */
  function signedHarness(options: { signature?: string; withSeparator?: boolean } = {}) {
    const payer = Wallet.createRandom();
    const base = settlementFixture({ payer: payer.address.toLowerCase() }, { payer: payer.address.toLowerCase() });
    const payload = base.payload as unknown as Record<string, unknown>;
    const parsed = paymentOf(base).parsed.payload as ExactEip3009Payload;
    const signature = options.signature ?? payer.signingKey.sign(exactEip3009.signature!.signedDigest(parsed, separator)).serialized;
    const settlement = { ...base, payload: { ...payload, signature }, verification: { ...base.verification, signature } };
    const h = stepHarness(settlement as typeof base, atomic);
    if (options.withSeparator !== false) h.ctx.network = { ...h.ctx.network, tokenDomainSeparator: async () => separator };
    let estimates = 0;
    h.chain.estimate = async () => (estimates++, { gas: 60_000n });
    return { h, estimates: () => estimates };
  }

  it("asks no estimate of an ordinary-key payer's EIP-3009 transfer whose signature the worker recovers itself", async () => {
    const { h, estimates } = signedHarness();
    expect(await preflight(h.ctx)).toMatchObject({ to: 'check_allowance', note: { transfer_estimate: expect.stringContaining('not needed'), payer_kind: 'eoa' } });
    expect(estimates()).toBe(0);
  });

  it("estimates a row whose signature is not the payer's (a database writer's row is not trusted), and a worker that cannot check it", async () => {
    const forged = signedHarness({ signature: '0x' + 'ab'.repeat(32) + 'cd'.repeat(32) + '1b' });
    await preflight(forged.h.ctx);
    expect(forged.estimates()).toBe(1);
    const noSeparator = signedHarness({ withSeparator: false });
    await preflight(noSeparator.h.ctx);
    expect(noSeparator.estimates()).toBe(1);
  });

  it('still estimates a contract-wallet payer, the sequential path, and a worker without the failure accounting', async () => {
    const contract = signedHarness();
    contract.h.chain.withCode.add(contract.h.ctx.settlement.payer);
    const cases = [contract.h, stepHarness(settlementFixture(), { accounting: true }), stepHarness(settlementFixture(), { overrides: { networkPath: 'atomic' } })];
    for (const h of cases) {
      let estimates = 0;
      h.chain.estimate = async () => (estimates++, { gas: 60_000n });
      if (!h.ctx.network.tokenDomainSeparator) h.ctx.network = { ...h.ctx.network, tokenDomainSeparator: async () => separator };
      expect(await preflight(h.ctx)).toMatchObject({ to: 'check_allowance' });
      expect(estimates).toBe(1);
    }
  });
});
