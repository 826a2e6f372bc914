import { EIP2612_PERMIT_GAS } from '@facilitator/payment-mechanisms';
import type { ExecutorItem } from '@facilitator/evm-executor';
import type { SettlementNetwork, SettlementWithVerification } from '../step';
import { CHAIN_ID, FakeChain, GAS_CAPS, networkFixture, permit2SettlementFixture, settlementFixture, TREASURY } from '../testing/fakes';
import { executorItemOf } from './executor-item';
import { storedItemCheck } from './stored-item-check';

const chain = new FakeChain();
const network = networkFixture(chain) as unknown as SettlementNetwork;

function check(settlement: SettlementWithVerification | null) {
  return storedItemCheck({
    settlements: { findWithVerification: async (id: string) => (settlement && settlement.id === id ? (settlement as never) : null) },
    networks: new Map([[CHAIN_ID, network]]),
    treasury: TREASURY,
  });
}

/** The item this worker builds for the settlement, as collect_fee does. */
function builtFor(settlement: SettlementWithVerification, gas = GAS_CAPS.fee + GAS_CAPS.transfer): ExecutorItem {
  return executorItemOf({ settlement, network, signers: { treasury: TREASURY } } as never, gas)!;
}

describe('storedItemCheck: an item read back from a stored batch (issue 40)', () => {
  it.each([
    ['an EIP-3009 payment', settlementFixture()],
    ['an exact payment through Permit2', permit2SettlementFixture()],
  ])('passes the item this worker builds for its settlement: %s', async (_what, settlement) => {
    expect(await check(settlement)(settlement.id, CHAIN_ID, builtFor(settlement))).toBeUndefined();
  });

  it('passes the most gas the worker could have given it, and refuses more', async () => {
    const settlement = settlementFixture();
    const most = GAS_CAPS.fee + GAS_CAPS.contractTransfer + EIP2612_PERMIT_GAS;
    expect(await check(settlement)(settlement.id, CHAIN_ID, builtFor(settlement, most))).toBeUndefined();
    expect(await check(settlement)(settlement.id, CHAIN_ID, builtFor(settlement, most + 1n))).toMatch(/above this worker's caps/);
  });

  it.each([
    ['another merchant', { merchant: '0x' + '99'.repeat(20) }, /payer, merchant, amount or nonce/],
    ['a larger amount', { amount: 2n * 1_000_000n }, /payer, merchant, amount or nonce/],
    ['another call on the token', { data: '0x23b872dd' + '00'.repeat(96) }, /call is not settlement stl_1's payment/],
    ['another target', { target: '0x' + '77'.repeat(20) }, /call is not settlement stl_1's payment/],
  ])('refuses an item with %s', async (_what, change, reason) => {
    const settlement = settlementFixture();
    expect(await check(settlement)(settlement.id, CHAIN_ID, { ...builtFor(settlement), ...change })).toMatch(reason);
  });

  it("refuses another settlement's item, an unknown settlement, and one on another chain", async () => {
    const settlement = settlementFixture();
    const other = settlementFixture({ id: 'stl_2', merchant: '0x' + '88'.repeat(20) });
    expect(await check(settlement)(settlement.id, CHAIN_ID, builtFor(other))).toMatch(/not settlement stl_1's/);
    expect(await check(null)('stl_1', CHAIN_ID, builtFor(settlement))).toMatch(/does not exist/);
    expect(await check(settlement)(settlement.id, 1, builtFor(settlement))).toMatch(/is not on chain 1/);
  });
});
