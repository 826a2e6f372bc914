// Scenario: Redis (with AOF persistence, as in docker-compose.yml) restarts while settlements run.
import { setTimeout as sleep } from 'node:timers/promises';
import { startPrivateRedis, type PrivateRedis } from '../support/private-redis';
import { startTestStack, TestStack } from '../support/test-stack';
import { describeWithRedisServer } from '../support/test-services';
import { checkLedger, ledgerStart, startSettlement, verifyMany, waitAllFinal } from './flows';
import { ScenarioReport } from './scenario-report';

describeWithRedisServer('a Redis restart during settlements', () => {
  const COUNT = 20;
  const report = new ScenarioReport('2-redis-restart', 'Redis restarted during settlements', 'Redis (AOF on) stopped for 2 s and started again while 20 settlements run (1 s blocks)');
  let redis: PrivateRedis;
  let stack: TestStack;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    stack = await startTestStack({ executor: true, devnet: { blockTime: 1 }, env: { QUEUE_BACKEND: 'redis', REDIS_URL: redis.url } });
  });
  afterAll(async () => {
    await stack?.stop();
    await redis?.stop();
    // last: it throws when a check failed, after the clean-up
    report.save();
  });

  it('settlements and queue state survive a Redis restart', async () => {
    // a quick sweeper, so a job lost with Redis would be found within the test
    await stack.startWorker({ SWEEP_INTERVAL_MS: '1000', SWEEP_STALE_AFTER_MS: '3000' });
    const verificationIds = await verifyMany(stack, COUNT);
    const ledger = await ledgerStart(stack);
    const settlementIds: string[] = [];
    const statuses = new Map<number, number>();
    const stream = (async () => {
      for (const id of verificationIds) {
        settlementIds.push(await startSettlement(stack, id));
        await sleep(150);
      }
    })();
    await sleep(1_200);
    const inFlight = await stack.db.prisma.settlement.count({ where: { id: { in: settlementIds }, state: { notIn: ['settled', 'failed'] } } });
    await redis.restart(2_000);
    // while Redis came back, what did a client see?
    for (let i = 0; i < 10; i++) {
      const res = await stack.http.get('/readyz');
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      await sleep(100);
    }
    await stream;
    const open = await waitAllFinal(stack, settlementIds, 120_000);
    report.note(`settlements in flight when Redis stopped: ${inFlight}`);
    expect(report.assert('settlements in flight at the restart', 'at least 1', inFlight, inFlight > 0)).toBe(true);
    expect(report.check('settlements still open at the end', 0, open)).toBe(true);
    const ready = await stack.http.get('/readyz');
    expect(report.check('API ready again without a restart of its own', 200, ready.status)).toBe(true);
    expect(await checkLedger(report, stack, { settlementIds, verificationIds, ...ledger })).toBe(true);
  }, 240_000);
});
