import { executorTargets, uptoPermit2, X402_EXACT_PERMIT2_PROXY, X402_UPTO_PERMIT2_PROXY, type PaymentMechanism } from '@facilitator/payment-mechanisms';
import { EXECUTOR_TARGET_SLOTS } from '@facilitator/evm-executor';
import { paymentOf, type SettlementPayment } from '../payment';
import { AMOUNT, CHAIN_ID, FakeChain, MERCHANT, PAYER, permit2SettlementFixture, PLAIN_SIGNATURE, settlementFixture, TOKEN, TREASURY } from '../testing/fakes';
import { executorCallOf } from './executor-item';

const chain = new FakeChain();
const network = { chainId: CHAIN_ID, tokenAddress: chain.tokenAddress };
/** the item's call of a payment's direct call for `amount`, as `directCallOf` builds it for a settlement */
const itemCall = ({ mechanism, parsed }: SettlementPayment, amount: bigint) => executorCallOf(mechanism.evmExecution!.directCall(parsed, chain, { amount }), network, TREASURY);

/** An upto payment of a maximum of AMOUNT whose witness names `facilitator` (the only sender its proxy accepts). */
function upto(facilitator: string): SettlementPayment {
  const parsed = uptoPermit2.fromStored(
    {
      permit2Authorization: {
        from: PAYER,
        permitted: { token: TOKEN, amount: AMOUNT.toString() },
        spender: X402_UPTO_PERMIT2_PROXY,
        nonce: '1283',
        deadline: '1900000000',
        witness: { to: MERCHANT, facilitator, validAfter: '0' },
      },
      signature: PLAIN_SIGNATURE,
    },
    { chainId: 84532, tokenAddress: TOKEN },
  );
  return { mechanism: uptoPermit2 as PaymentMechanism<unknown>, parsed };
}

describe("an executor item's call", () => {
  it("goes to the contracts the mechanisms name for the executor: its token and x402's Permit2 proxies, one for each of its slots", () => {
    expect(executorTargets(network)).toEqual({ token: chain.tokenAddress, exactProxy: X402_EXACT_PERMIT2_PROXY, uptoProxy: X402_UPTO_PERMIT2_PROXY });
    expect(Object.keys(executorTargets(network)).sort()).toEqual(['token', ...EXECUTOR_TARGET_SLOTS].sort());
  });

  it("is the payment's direct call: the token's for EIP-3009, the exact proxy's settle for exact through Permit2", () => {
    expect(itemCall(paymentOf(settlementFixture()), AMOUNT)).toMatchObject({ to: TOKEN, gasKind: 'transferWithAuthorization' });
    expect(itemCall(paymentOf(permit2SettlementFixture()), AMOUNT)).toMatchObject({ to: X402_EXACT_PERMIT2_PROXY, gasKind: 'x402ExactPermit2Proxy.settle' });
  });

  it('exists for upto only when its witness names the treasury (the executor calls from its address), for the amount settled', () => {
    const ours = itemCall(upto(TREASURY), AMOUNT / 2n);
    expect(ours).toMatchObject({ to: X402_UPTO_PERMIT2_PROXY, sender: TREASURY });
    // settle(permit, amount, ...): the amount is the word after the permit's four
    expect(BigInt('0x' + ours!.data.slice(10 + 4 * 64, 10 + 5 * 64))).toBe(AMOUNT / 2n);
    expect(itemCall(upto('0x' + '77'.repeat(20)), AMOUNT)).toBeUndefined();
    // more than the payer's maximum is refused, never settled as something else
    expect(() => itemCall(upto(TREASURY), AMOUNT + 1n)).toThrow();
  });

  it('does not exist for a call to any other contract: the executor would refuse it', () => {
    const payment = paymentOf(settlementFixture());
    const elsewhere = { ...payment.mechanism, evmExecution: { ...payment.mechanism.evmExecution!, directCall: () => ({ to: '0x' + '99'.repeat(20), data: '0x', gasKind: 'transferWithAuthorization' as const }) } };
    expect(itemCall({ mechanism: elsewhere, parsed: payment.parsed }, AMOUNT)).toBeUndefined();
  });
});
