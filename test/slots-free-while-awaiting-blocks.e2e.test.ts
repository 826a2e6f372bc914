// No job holds a slot while it waits for a block (issue 27): a worker with two settlement slots sends the
// transactions of six settlements before any block is mined, and the blocks mined, not the slots, decide
// when they settle. Blocks are mined by hand (automine off), so the test waits on the chain's state, never
// on time: with slots held while waiting, only two transactions would ever be in the pool at once. Jobs that
// gave up their slot are woken only by the outcome (their fallback delay is ten minutes).
import type { JsonRpcProvider } from 'ethers';
import { transfersOnChain } from './support/chain-actions';
import { startTestStack, type TestStack } from './support/test-stack';
import { until } from './support/until';

const SETTLEMENTS = 6;
// the fallback delay is out of reach of every wait below: only the promotion on a known outcome wakes a job
const SLOTS = { SETTLEMENT_CONCURRENCY: '2', SETTLEMENT_CHAIN_RECHECK_MS: '600000' };

/** Transactions of these accounts in the pool, not yet mined. */
async function unmined(provider: JsonRpcProvider, accounts: readonly string[]): Promise<number> {
  const counts = await Promise.all(
    accounts.map(async (a) => (await provider.getTransactionCount(a, 'pending')) - (await provider.getTransactionCount(a, 'latest'))),
  );
  return counts.reduce((sum, n) => sum + n, 0);
}

async function settleMany(stack: TestStack, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const v = await stack.http.post('/v1/verify').send((await stack.payment()).formB());
    expect(v.status).toBe(200);
    const s = await stack.http.post('/v1/settle').send({ verification_id: v.body.verification_id, destination_address: stack.devnet.accounts.merchant.address });
    expect(s.status).toBe(200);
    ids.push(s.body.settlement_id as string);
  }
  return ids;
}

async function states(stack: TestStack, ids: readonly string[]): Promise<string[]> {
  return Promise.all(ids.map(async (id) => (await stack.http.get(`/v1/settlements/${id}`)).body.state as string));
}

async function blockNumber(stack: TestStack): Promise<number> {
  return stack.devnet.provider.getBlockNumber();
}

async function mine(stack: TestStack): Promise<void> {
  await stack.devnet.provider.send('evm_mine', []);
}

async function onChainSince(stack: TestStack, block: number) {
  const { merchant, payer, treasury } = stack.devnet.accounts;
  return {
    fees: await transfersOnChain(stack.devnet, block + 1, merchant.address, treasury.address),
    payments: await transfersOnChain(stack.devnet, block + 1, payer.address, merchant.address),
  };
}

describe('the sequential path', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startTestStack();
    await stack.startWorker(SLOTS);
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
  });

  it('sends six fees with two slots before a block is mined, then six transfers, and settles all six in two blocks', async () => {
    const { provider, accounts } = stack.devnet;
    const relayers = accounts.relayers.map((r) => r.address);
    await provider.send('evm_setAutomine', [false]);
    const start = await blockNumber(stack);
    const ids = await settleMany(stack, SETTLEMENTS);

    await until(`${SETTLEMENTS} fees in the pool at once`, async () => (await unmined(provider, [accounts.treasury.address])) === SETTLEMENTS);
    expect(await blockNumber(stack)).toBe(start);
    await mine(stack);
    await until(`${SETTLEMENTS} transfers in the pool at once`, async () => (await unmined(provider, relayers)) === SETTLEMENTS);
    await mine(stack);
    await until('every settlement settled', async () => (await states(stack, ids)).every((s) => s === 'settled'));

    expect(await blockNumber(stack)).toBe(start + 2);
    expect(await onChainSince(stack, start)).toEqual({ fees: SETTLEMENTS, payments: SETTLEMENTS });
  }, 60_000);
});

describe('the atomic path', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startTestStack({ executor: true });
    await stack.startWorker(SLOTS);
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
  });

  it('places six settlements with two slots in batches sent before a block is mined, and settles all six in one block', async () => {
    const { provider, accounts } = stack.devnet;
    const relayers = accounts.relayers.map((r) => r.address);
    await provider.send('evm_setAutomine', [false]);
    const start = await blockNumber(stack);
    const ids = await settleMany(stack, SETTLEMENTS);

    // every settlement placed in a batch that was sent, while no block came: each batch's transaction in the
    // pool (a batch's row is stored a moment before its transaction is broadcast; one mined without the other
    // would leave its settlements for a block this test never mines)
    await until(`${SETTLEMENTS} settlements in sent batches`, async () => {
      const batched = await stack.db.pool.query<{ n: string; batches: string }>(
        `SELECT count(*) AS n, count(DISTINCT i.batch_id) AS batches FROM settlement_batch_items i
           JOIN chain_transactions t ON t.settlement_id = i.batch_id AND t.purpose = 'settle' WHERE i.settlement_id = ANY($1)`,
        [ids],
      );
      const { n, batches } = batched.rows[0];
      return Number(n) === SETTLEMENTS && (await unmined(provider, relayers)) === Number(batches);
    });
    expect(await blockNumber(stack)).toBe(start);
    await mine(stack);
    await until('every settlement settled', async () => (await states(stack, ids)).every((s) => s === 'settled'));

    expect(await blockNumber(stack)).toBe(start + 1);
    expect(await onChainSince(stack, start)).toEqual({ fees: SETTLEMENTS, payments: SETTLEMENTS });
  }, 60_000);
});
