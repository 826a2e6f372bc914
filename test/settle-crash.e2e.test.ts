// Crash safety: the worker is SIGKILLed twice at random moments while 20 settlements run on a chain
// with 1 s blocks (so kills land between fees and transfers). Every settlement must end settled, with
// exactly one fee and one transfer each on chain.
import { balances, difference, transfersOnChain } from './support/chain-actions';
import { PRICE_UNITS, startTestStack, TestStack } from './support/test-stack';
import { setTimeout as sleep } from 'node:timers/promises';

const COUNT = 20;
const FEE = 10_000n;
const MONEY_MOVING = ['collect_fee', 'fee_collected', 'executing'];
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack({ devnet: { blockTime: 1 } });
});
afterAll(async () => {
  await stack?.stop();
});

const randomBetween = (min: number, max: number) => min + Math.floor(Math.random() * (max - min));

it('20 settlements survive two SIGKILLs of the worker: all settled, exactly 20 fees and 20 transfers', async () => {
  const { merchant, payer, treasury } = stack.devnet.accounts;
  const verificationIds: string[] = [];
  for (let i = 0; i < COUNT; i++) {
    const v = await stack.http.post('/v1/verify').send((await stack.payment()).formB());
    expect(v.status).toBe(200);
    verificationIds.push(v.body.verification_id);
  }
  const startBlock = await stack.devnet.provider.getBlockNumber();
  const before = await balances(stack.devnet);

  let worker = await stack.startWorker();
  const settlementIds = await Promise.all(
    verificationIds.map(async (verification_id) => {
      const res = await stack.http.post('/v1/settle').send({ verification_id, destination_address: merchant.address });
      expect(res.status).toBe(200);
      return res.body.settlement_id as string;
    }),
  );

  // The first kill lands at a random moment within a block of the first fee being sent, so fees and
  // transfers are in flight (a fixed window can miss them: 20 settlements on 1 s blocks may all be done
  // within 1.1 s); the second lands once the new worker resumed.
  const statesNow = async () =>
    (await stack.db.prisma.settlement.findMany({ where: { id: { in: settlementIds } }, select: { state: true } })).map((s) => s.state);
  const moneyMoving = (states: string[]) => states.some((state) => MONEY_MOVING.includes(state));
  const kills: string[][] = [];
  for (const [min, max] of [
    [0, 400],
    [500, 1_500],
  ]) {
    if (kills.length === 0) {
      const deadline = Date.now() + 20_000;
      while (!moneyMoving(await statesNow()) && Date.now() < deadline) await sleep(20);
    }
    await sleep(randomBetween(min, max));
    kills.push(await statesNow());
    worker.child.kill('SIGKILL');
    await worker.exited;
    worker = await stack.startWorker();
  }

  const deadline = Date.now() + 90_000;
  let open = COUNT;
  while (Date.now() < deadline) {
    open = await stack.db.prisma.settlement.count({ where: { id: { in: settlementIds }, state: { notIn: ['settled', 'failed'] } } });
    if (open === 0) break;
    await sleep(250);
  }
  expect(open).toBe(0);

  const final = await stack.db.prisma.settlement.findMany({ where: { id: { in: settlementIds } } });
  expect(final.map((s) => s.state)).toEqual(Array(COUNT).fill('settled'));
  // the first kill interrupted money movement: some settlements were between their fee and their transfer
  expect(moneyMoving(kills[0])).toBe(true);

  expect(await transfersOnChain(stack.devnet, startBlock, merchant.address, treasury.address)).toBe(COUNT);
  expect(await transfersOnChain(stack.devnet, startBlock, payer.address, merchant.address)).toBe(COUNT);
  const n = BigInt(COUNT);
  expect(difference(await balances(stack.devnet), before)).toEqual({
    payer: -n * PRICE_UNITS,
    merchant: n * (PRICE_UNITS - FEE),
    treasury: n * FEE,
  });
  // one fee and one transfer transaction per settlement, never a second of either
  expect(await stack.db.prisma.chainTransaction.count({ where: { settlementId: { in: settlementIds } } })).toBe(2 * COUNT);
}, 150_000);
