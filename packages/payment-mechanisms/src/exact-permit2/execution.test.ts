import { X402_EXACT_PERMIT2_PROXY } from '../permit2/addresses';
import { AMOUNT, FakeContractReads, NONCE, PAYEE, PAYER, permit2Payment, SIGNATURE, settledLog, transferLog } from '../testing/permit2-chain';
import type { MechanismChain } from '../chain-port';
import { exactPermit2 } from '.';
import { settleCalldata } from './proxy-calldata';
import { executorInterface } from '@facilitator/evm-executor';

const payment = permit2Payment();
const ROUTER = '0x' + '55'.repeat(20);

function chainWith(setup: (chain: FakeContractReads) => void = () => undefined): FakeContractReads {
  const chain = new FakeContractReads();
  setup(chain);
  return chain;
}

/** a transaction sent to the exact proxy with this calldata, which moved the amount to the payee */
function proxySettle(chain: FakeContractReads, hash: string, calldata = settleCalldata(payment.payload, SIGNATURE), value = AMOUNT) {
  chain.mine({ hash, to: X402_EXACT_PERMIT2_PROXY, data: calldata, logs: [transferLog(PAYER, PAYEE, value, 0), settledLog(1)] });
}

// Permit2's search makes none of the token's own calls
const find = (chain: FakeContractReads) => exactPermit2.evmExecution!.findExecution(payment, chain as unknown as MechanismChain);

describe('finding who executed a Permit2 payment', () => {
  it('answers none, without searching, while its nonce is free: every execution spends it', async () => {
    const chain = chainWith((c) => proxySettle(c, '0xaaa'));
    expect(await find(chain)).toBeUndefined();
    expect(chain.asked).toEqual([expect.stringMatching(/^readContract\(0x000000000022d473030f116ddee9f6b43ac78ba3,/)]);
  });

  it("finds the proxy call that spent its nonce, and what it paid the payee from that transaction's logs", async () => {
    const chain = chainWith((c) => {
      c.spend(PAYER, NONCE);
      // another payment of the payer to the same payee, of the same amount, with another nonce: not this one
      proxySettle(c, '0xbbb', settleCalldata({ ...payment.payload, nonce: NONCE + 1n }, SIGNATURE));
      proxySettle(c, '0xccc');
    });
    expect(await find(chain)).toEqual({ txHash: '0xccc', block: 100, to: X402_EXACT_PERMIT2_PROXY, paidToPayee: AMOUNT });
  });

  it('answers none when the nonce went without paying the payee the amount through the proxy (invalidated, or another permit)', async () => {
    const chain = chainWith((c) => {
      c.spend(PAYER, NONCE);
      // the payer paying the payee by itself, and another amount through the proxy: neither is this payment
      c.mine({ hash: '0xddd', to: payment.payload.token, data: '0xa9059cbb', logs: [transferLog(PAYER, PAYEE, AMOUNT, 0)] });
      proxySettle(c, '0xeee', settleCalldata({ ...payment.payload, nonce: NONCE + 1n, amount: 5n }, SIGNATURE), 5n);
    });
    expect(await find(chain)).toBeUndefined();
  });

  it('is unattributed when a contract reached the proxy: the transfer may be this payment, its nonce is not in sight', async () => {
    const chain = chainWith((c) => {
      c.spend(PAYER, NONCE);
      c.mine({ hash: '0xfff', to: ROUTER, data: '0x12345678', logs: [transferLog(PAYER, PAYEE, AMOUNT, 0), settledLog(1)] });
    });
    expect(await find(chain)).toEqual({ unattributed: expect.stringContaining(`transaction 0xfff paid the payee the amount through the exact proxy from a contract (${ROUTER})`) });
  });

  it('still finds its own execution beside an unattributed one', async () => {
    const chain = chainWith((c) => {
      c.spend(PAYER, NONCE);
      c.mine({ hash: '0xfff', to: ROUTER, data: '0x12345678', logs: [transferLog(PAYER, PAYEE, AMOUNT, 0), settledLog(1)] });
      proxySettle(c, '0xccc');
    });
    expect(await find(chain)).toMatchObject({ txHash: '0xccc', paidToPayee: AMOUNT });
  });

  it('is unattributed when a candidate transaction is gone, or calls the proxy otherwise, or there are too many to read', async () => {
    const gone = chainWith((c) => {
      c.spend(PAYER, NONCE);
      proxySettle(c, '0xaaa');
    });
    const recentLogs = gone.recentLogs.bind(gone);
    gone.recentLogs = async (...args) => {
      const found = await recentLogs(...args);
      gone.transactions.clear();
      return found;
    };
    expect(await find(gone)).toEqual({ unattributed: expect.stringContaining('is no longer found') });

    const unknownCall = chainWith((c) => {
      c.spend(PAYER, NONCE);
      proxySettle(c, '0xaaa', '0xdeadbeef');
    });
    expect(await find(unknownCall)).toEqual({ unattributed: expect.stringContaining('neither settle nor settleWithPermit') });

    const many = chainWith((c) => {
      c.spend(PAYER, NONCE);
      for (let i = 0; i < 17; i++) proxySettle(c, `0x${i.toString(16).padStart(3, '0')}`, settleCalldata({ ...payment.payload, nonce: NONCE + 1n + BigInt(i) }, SIGNATURE));
    });
    expect(await find(many)).toEqual({ unattributed: expect.stringContaining('more than the 16 looked through') });
  });
});

describe("a Permit2 payment our own settlement executor ran (the EIP-7702 treasury calls the proxy)", () => {
  const TREASURY = '0x' + '7e'.repeat(20);
  const MERCHANT_FEE = 1_000n;
  const word = (value: string | bigint) => '0x' + (typeof value === 'bigint' ? value.toString(16) : value.slice(2)).padStart(64, '0');
  /** the executor's outcome of one item, keyed by payer and nonce */
  const itemLog = (event: 'Settled' | 'NotSettled', nonce: bigint, index: number) => ({
    address: TREASURY,
    topics: [executorInterface.getEvent(event)!.topicHash, word(PAYER), word(nonce)],
    data: event === 'Settled' ? '0x' : executorInterface.getAbiCoder().encode(['bytes'], ['0x']),
    index,
  });
  /** one batch of our executor: an item of the payer's per nonce, each its fee, its transfer through the proxy and its outcome */
  function ourBatch(chain: FakeContractReads, hash: string, items: Array<{ nonce: bigint; settled: boolean }>) {
    const logs = items.flatMap(({ nonce, settled }, i) => {
      const at = i * 4;
      return settled
        ? [transferLog(PAYEE, TREASURY, MERCHANT_FEE, at), transferLog(PAYER, PAYEE, AMOUNT, at + 1), settledLog(at + 2), itemLog('Settled', nonce, at + 3)]
        : [itemLog('NotSettled', nonce, at)];
    });
    chain.mine({ hash, to: TREASURY, data: '0xdeadbeef', logs });
  }
  const findWithExecutor = (chain: FakeContractReads) => exactPermit2.evmExecution!.findExecution(payment, Object.assign(chain, { executor: TREASURY }) as unknown as MechanismChain);

  it("is the item of our batch for this payer and nonce that settled, paying what that item's transfer paid", async () => {
    const chain = chainWith((c) => {
      c.spend(PAYER, NONCE);
      ourBatch(c, '0xb47', [{ nonce: NONCE + 1n, settled: true }, { nonce: NONCE, settled: true }]);
    });
    expect(await findWithExecutor(chain)).toEqual({ txHash: '0xb47', block: 100, to: TREASURY, paidToPayee: AMOUNT });
  });

  it("is not an earlier payment of the payer's that our batch settled (another nonce): this nonce went unpaid, not unattributed", async () => {
    const chain = chainWith((c) => {
      // the payer invalidated this nonce in Permit2; our executor had settled its previous payment to the same payee
      c.spend(PAYER, NONCE);
      ourBatch(c, '0xb47', [{ nonce: NONCE + 1n, settled: true }]);
    });
    expect(await findWithExecutor(chain)).toBeUndefined();
  });

  it('is no execution when its item in our batch failed', async () => {
    const chain = chainWith((c) => {
      c.spend(PAYER, NONCE);
      ourBatch(c, '0xb47', [{ nonce: NONCE + 1n, settled: true }, { nonce: NONCE, settled: false }]);
    });
    expect(await findWithExecutor(chain)).toBeUndefined();
  });

  it("stays unattributed when the caller does not say the treasury is its executor: a contract like any other", async () => {
    const chain = chainWith((c) => {
      c.spend(PAYER, NONCE);
      ourBatch(c, '0xb47', [{ nonce: NONCE + 1n, settled: true }]);
    });
    expect(await find(chain)).toEqual({ unattributed: expect.stringContaining('from a contract') });
  });
});
