// Attack (e): filling the disk with verifications. 10,000 verifications with 4 KiB of metadata; what each
// costs the database, and the scheduled retention job (once across the cluster) removing the rejected ones.
import { startTestStack, withStackQueues, type TestStack } from '../support/test-stack';
import { abuseReport } from './abuse-report';
import { setTimeout as sleep } from 'node:timers/promises';

const METADATA_4K = { source: 'abuse', note: 'x'.repeat(4096 - 40) };
const VERIFIED = 1_000;
const REJECTED = 9_000;
let stack: TestStack;

beforeAll(async () => {
  // the retention job runs every second here, and the rejected rows are made old by hand
  stack = await startTestStack({ env: { RETENTION_INTERVAL_MS: '1000' } });
});
afterAll(async () => {
  await stack?.stop();
});

async function tableBytes(): Promise<number> {
  const rows = await stack.db.prisma.$queryRaw<Array<{ bytes: bigint }>>`SELECT pg_total_relation_size('verifications') AS bytes`;
  return Number(rows[0].bytes);
}

async function inBatches<T>(items: T[], size: number, run: (item: T) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(run));
}

it('(e) 10,000 verifications with 4 KiB of metadata: bounded rows, rejected ones purged by the retention job', async () => {
  const report = abuseReport('e-storage', 'Filling the disk with verifications', `${VERIFIED + REJECTED} verifications carrying 4 KiB of metadata each`);
  const tooBig = await stack.http.post('/v1/verify').send((await stack.payment()).formB({ metadata: { ...METADATA_4K, extra: 'y'.repeat(200) } }));
  report.check('metadata above 4 KiB', '400 invalid_request', `${tooBig.status} ${tooBig.body.error?.code}`);
  // Form A (and /x402) accept extra fields up to the body limit: a verified one is kept without its body
  const padded = await stack.http.post('/v1/verify').send((await stack.payment()).formA({ description: 'z'.repeat(60_000) }));
  const paddedRow = await stack.db.prisma.verification.findUnique({ where: { id: padded.body.details?.verification_id ?? '' } });
  const paddedBytes = Buffer.byteLength(JSON.stringify(paddedRow?.request ?? null), 'utf8');
  report.check('Form A with 60 KB of extra requirement fields: verified', 200, padded.status);
  report.check('its stored request at most 8192 bytes of JSON', true, paddedBytes <= 8192);
  report.note(`Form A with 60 KB of extra requirement fields: ${paddedBytes} bytes of request stored`);

  const start = await tableBytes();
  const payments = await Promise.all(Array.from({ length: VERIFIED }, () => stack.payment()));
  let verifiedOk = 0;
  await inBatches(payments, 50, async (p) => {
    const body = p.formB();
    const res = await stack.http.post('/v1/verify').send({ ...body, metadata: { ...(body.metadata as object), ...METADATA_4K } });
    if (res.status === 200) verifiedOk++;
  });
  const afterVerified = await tableBytes();
  const wrongAmount = (await stack.payment()).formB({ expected_amount: '20000' });
  let rejectedOk = 0;
  await inBatches(Array.from({ length: REJECTED }), 100, async () => {
    const res = await stack.http.post('/v1/verify').send({ ...wrongAmount, metadata: { ...(wrongAmount.metadata as object), ...METADATA_4K } });
    if (res.status === 400) rejectedOk++;
  });
  const afterRejected = await tableBytes();
  const perVerified = Math.round((afterVerified - start) / VERIFIED);
  const perRejected = Math.round((afterRejected - afterVerified) / REJECTED);
  report.check('verified', VERIFIED, verifiedOk);
  report.check('rejected', REJECTED, rejectedOk);
  report.assert('database growth per verified verification (metadata stored once)', '< 2 × 4 KiB', `${perVerified} bytes`, perVerified < 8192);
  report.assert('database growth per rejected verification (no body kept)', '< 1 KiB', `${perRejected} bytes`, perRejected < 1024);
  const stored = await stack.db.prisma.verification.findFirst({ where: { status: 'rejected' } });
  report.check('a rejected row keeps who, what and why, not the body', 'payer, amount, failure; no request/metadata/signature',
    stored?.payer && stored.amount && stored.failureMessage && stored.request === null && stored.metadata === null && stored.signature === null
      ? 'payer, amount, failure; no request/metadata/signature' : JSON.stringify(stored));

  // older than the retention (30 days by default): the scheduled job, in two workers, removes them once
  await stack.db.prisma.$executeRaw`UPDATE verifications SET created_at = now() - interval '31 days' WHERE status = 'rejected'`;
  await Promise.all([stack.startWorker(), stack.startWorker()]);
  let left = REJECTED;
  for (let i = 0; i < 100 && left > 0; i++) {
    await sleep(200);
    left = await stack.db.prisma.verification.count({ where: { status: 'rejected' } });
  }
  report.check('rejected verifications left after the retention job', 0, left);
  report.check('verified verifications kept', VERIFIED, await stack.db.prisma.verification.count({ where: { status: 'verified' } }));
  const schedulers = await withStackQueues(stack.config, async (queues) => (await queues.maintenance.getJobSchedulers()).map((s) => s.key));
  report.note(`growth: ${perVerified} bytes per verified row (4 KiB metadata kept once, TOAST-compressed), ${perRejected} bytes per rejected row`);
  report.check('retention schedulers across two workers', 1, schedulers.filter((key) => key === 'retention').length);
  report.check('sweep schedulers across two workers (the sweeper runs once across the cluster too)', 1, schedulers.filter((key) => key === 'sweep').length);
  report.save();
  expect(perRejected).toBeLessThan(1024);
  expect(padded.status).toBe(200);
  expect(paddedBytes).toBeLessThan(8192);
  expect(left).toBe(0);
  expect(schedulers.sort()).toEqual(['finality', 'retention', 'sweep']);
}, 240_000);
