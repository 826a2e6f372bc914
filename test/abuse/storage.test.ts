// Attack (e): filling the disk with verifications. 10,000 verifications with 4 KiB of metadata; what each
// costs the database, and the scheduled retention job (once across the cluster) removing the rejected ones.
import { Wallet } from 'ethers';
import { MerchantAction } from '@facilitator/merchants';
import { newMerchant } from '../support/chain-actions';
import { merchantCall } from '../support/merchant-client';
import { startTestStack, withStackQueues, type TestStack } from '../support/test-stack';
import { abuseReport } from './abuse-report';
import { setTimeout as sleep } from 'node:timers/promises';

const METADATA_4K = { source: 'abuse', note: 'x'.repeat(4096 - 40) };
const VERIFIED = 1_000;
const REJECTED = 9_000;
let stack: TestStack;

beforeAll(async () => {
  // the retention job runs every second here, and rows are made old by hand; a verification that can
  // never settle goes as soon as its authorization expired (no margin), and one may be verified with 3 s left
  stack = await startTestStack({ env: { RETENTION_INTERVAL_MS: '1000', RETENTION_EXPIRED_VERIFICATIONS_HOURS: '0', AUTHORIZATION_EXPIRY_MARGIN_SECONDS: '1' } });
});
afterAll(async () => {
  await stack?.stop();
});

/** Rows of `table` matching `where` (SQL over its columns), and their bytes (pg_column_size of each row). */
async function rowsOf(table: string, where: string, values: unknown[] = []): Promise<{ rows: number; bytes: number }> {
  const [row] = await stack.db.prisma.$queryRawUnsafe<Array<{ rows: bigint; bytes: bigint | null }>>(
    `SELECT count(*) AS rows, sum(pg_column_size(t.*)) AS bytes FROM ${table} t WHERE ${where}`,
    ...values,
  );
  return { rows: Number(row.rows), bytes: Number(row.bytes ?? 0) };
}

/** Polls until `done` holds (the retention job runs every second), for at most `ms`. */
async function waitFor(done: () => Promise<boolean>, ms = 30_000): Promise<void> {
  for (const deadline = Date.now() + ms; Date.now() < deadline && !(await done()); ) await sleep(250);
}

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
  // the 1,000 and the padded Form A one: all still settleable, so all kept
  report.check('verified verifications (still settleable) kept', VERIFIED + 1, await stack.db.prisma.verification.count({ where: { status: 'verified' } }));
  const schedulers = await withStackQueues(stack.config, async (queues) => (await queues.maintenance.getJobSchedulers()).map((s) => s.key));
  report.note(`growth: ${perVerified} bytes per verified row (4 KiB metadata kept once, TOAST-compressed), ${perRejected} bytes per rejected row`);
  report.check('retention schedulers across two workers', 1, schedulers.filter((key) => key === 'retention').length);
  report.check('sweep schedulers across two workers (the sweeper runs once across the cluster too)', 1, schedulers.filter((key) => key === 'sweep').length);
  report.save(); // throws when a check above failed
  expect(perRejected).toBeLessThan(1024);
  expect(padded.status).toBe(200);
  expect(paddedBytes).toBeLessThan(8192);
  expect(left).toBe(0);
  expect(schedulers.sort()).toEqual(['finality', 'retention', 'sweep']);
}, 240_000);

const EXPIRING = 300;
const FAILING = 100;
const STRANGE_MERCHANTS = 200;
const FEE = 10_000n;

it('(e2) verifications that can never settle, failed settlements and strangers\' merchant secrets: deleted by the retention job, merchants\' records kept', async () => {
  const report = abuseReport(
    'e2-storage-retention',
    'Filling the disk with what is never settled',
    `${EXPIRING} verified payments left to expire, ${FAILING} settlements failed against an allowance of one fee, ${STRANGE_MERCHANTS} fresh keys asking for a webhook secret each`,
  );
  // 1. verified, never settled: authorizations valid for 20 s more (they expire while the rest is made)
  const validBefore = BigInt(Math.floor(Date.now() / 1000) + 20);
  const expiring = await Promise.all(Array.from({ length: EXPIRING }, () => stack.payment({ validBefore })));
  const expiringIds: string[] = [];
  await inBatches(expiring, 50, async (p) => {
    const res = await stack.http.post('/v1/verify').send(p.formB());
    if (res.status === 200) expiringIds.push(res.body.verification_id);
  });
  const expiringMade = await rowsOf('verifications', 'id = ANY($1)', [expiringIds]);

  // 2. failed settlements: one fee of allowance, so one settles and the rest fail with nothing sent
  const merchant = await newMerchant(stack.devnet, { balance: 10n * FEE, allowance: FEE });
  const failingIds: string[] = [];
  for (let i = 0; i < FAILING; i++) {
    const v = await stack.http.post('/v1/verify').send((await stack.payment({ to: merchant.address })).formB({ seller_address: merchant.address }));
    failingIds.push(v.body.verification_id);
  }
  const started = await Promise.all(failingIds.map((id) => stack.http.post('/v1/settle').send({ verification_id: id, destination_address: merchant.address })));
  const settlementIds = started.map((r) => r.body.settlement_id as string);
  // all ended, and the failed ones marked final by reorg watching (which touches updated_at): only then made old
  const where = { id: { in: settlementIds } };
  await waitFor(async () =>
    (await stack.db.prisma.settlement.count({ where: { ...where, state: { in: ['settled', 'failed'] } } })) === FAILING &&
    (await stack.db.prisma.settlement.count({ where: { ...where, state: 'failed', NOT: { finality: 'final' } } })) === 0);
  const settled = await stack.db.prisma.settlement.findMany({ where: { id: { in: settlementIds }, state: 'settled' }, select: { id: true, verificationId: true } });
  const failedMade = await rowsOf('settlements', `id = ANY($1) AND state = 'failed'`, [settlementIds]);
  const transitionsMade = await rowsOf('settlement_transitions', 'settlement_id = ANY($1)', [settlementIds]);

  // 3. strangers' merchant rows: each fresh key reads "its" webhook secret (a secret and a nonce each; no merchant
  // record, since signing a request is not worth keeping: issue 40, 7d)
  const strangers = Array.from({ length: STRANGE_MERCHANTS }, () => Wallet.createRandom());
  let secretsServed = 0;
  await inBatches(strangers, 20, async (w) => {
    if ((await merchantCall(stack, w, MerchantAction.GetWebhookSecret)).status === 200) secretsServed++;
  });
  const strangerAddresses = strangers.map((w) => w.address.toLowerCase());
  const protectedMerchant = Wallet.createRandom(); // one that asked for something: settle protection
  const keyed = await merchantCall(stack, protectedMerchant, MerchantAction.EnableSettleProtection);
  await merchantCall(stack, protectedMerchant, MerchantAction.GetWebhookSecret);
  const merchantRowsMade = await rowsOf('merchants', 'address = ANY($1)', [strangerAddresses]);
  const secretsMade = await rowsOf('merchant_webhook_secrets', 'merchant = ANY($1)', [strangerAddresses]);
  const noncesMade = await rowsOf('merchant_request_nonces', 'merchant = ANY($1)', [strangerAddresses]);

  // time passes: 91 days for the settlements, merchants and secrets, 31 for the verifications; nonces expire
  const allMerchants = [...strangerAddresses, protectedMerchant.address.toLowerCase()];
  await stack.db.prisma.$executeRaw`UPDATE settlements SET updated_at = now() - interval '91 days' WHERE id = ANY(${settlementIds})`;
  await stack.db.prisma.$executeRaw`UPDATE verifications SET created_at = now() - interval '31 days' WHERE id = ANY(${failingIds})`;
  await stack.db.prisma.$executeRaw`UPDATE merchants SET created_at = now() - interval '91 days', updated_at = now() - interval '91 days', last_seen_at = now() - interval '91 days' WHERE address = ANY(${allMerchants})`;
  await stack.db.prisma.$executeRaw`UPDATE merchant_webhook_secrets SET created_at = now() - interval '91 days' WHERE merchant = ANY(${allMerchants})`;
  await stack.db.prisma.$executeRaw`UPDATE merchant_request_nonces SET expires_at = now() - interval '1 second' WHERE merchant = ANY(${allMerchants})`;

  const expiredAfter = Math.max(0, Number(validBefore) * 1000 - Date.now());
  const leftOf = async () => ({
    expiring: (await rowsOf('verifications', 'id = ANY($1)', [expiringIds])).rows,
    failed: (await rowsOf('settlements', `id = ANY($1) AND state = 'failed'`, [settlementIds])).rows,
    merchants: (await rowsOf('merchants', 'address = ANY($1)', [strangerAddresses])).rows,
    secrets: (await rowsOf('merchant_webhook_secrets', 'merchant = ANY($1)', [strangerAddresses])).rows,
    nonces: (await rowsOf('merchant_request_nonces', 'merchant = ANY($1)', [allMerchants])).rows,
  });
  const started2 = Date.now();
  await waitFor(async () => Object.values(await leftOf()).every((n) => n === 0), expiredAfter + 30_000);
  const left = await leftOf();
  report.note(`all deleted ${((Date.now() - started2) / 1000).toFixed(1)} s after the rows were made old, the verifications' authorizations expiring ${(expiredAfter / 1000).toFixed(1)} s into that wait (the job runs every second here, hourly by default)`);

  const settledIds = settled.map((s) => s.id);
  const failedVerifications = failingIds.filter((id) => !settled.some((s) => s.verificationId === id));
  const ok = [
    report.check('verified verifications whose authorization expired: made', EXPIRING, expiringMade.rows),
    report.check('...left after the retention job', 0, left.expiring),
    report.check('verified verifications still settleable: kept', VERIFIED + 1, await stack.db.prisma.verification.count({ where: { status: 'verified', id: { notIn: [...expiringIds, ...failingIds] } } })),
    report.check('settlements failed with nothing sent: made', FAILING - 1, failedMade.rows),
    report.check('...left after the retention job', 0, left.failed),
    report.check('...their history rows left', 0, (await rowsOf('settlement_transitions', 'settlement_id = ANY($1) AND NOT (settlement_id = ANY($2))', [settlementIds, settledIds])).rows),
    report.check('...their verifications (31 days old) left', 0, (await rowsOf('verifications', 'id = ANY($1)', [failedVerifications])).rows),
    report.check('settled settlement kept, with its history and its verification', '1 settled, history kept, verification kept',
      `${settledIds.length} settled, history ${(await rowsOf('settlement_transitions', 'settlement_id = ANY($1)', [settledIds])).rows > 0 ? 'kept' : 'gone'}, verification ${(await rowsOf('verifications', 'id = ANY($1)', [settled.map((s) => s.verificationId)])).rows === 1 ? 'kept' : 'gone'}`),
    report.check('webhook secrets served to fresh keys', STRANGE_MERCHANTS, secretsServed),
    report.check('strangers\' merchant rows / secrets / nonces made', `0 / ${STRANGE_MERCHANTS} / ${STRANGE_MERCHANTS}`, `${merchantRowsMade.rows} / ${secretsMade.rows} / ${noncesMade.rows}`),
    report.check('...left after the retention job (unseen for 90 days, nothing asked for)', '0 / 0 / 0', `${left.merchants} / ${left.secrets} / ${left.nonces}`),
    report.check('merchant with settle protection (as old): row and secret kept', '200, key kept, 1 secret',
      `${keyed.status}, key ${(await stack.db.prisma.merchant.findUnique({ where: { address: protectedMerchant.address.toLowerCase() } }))?.settleKeyHash ? 'kept' : 'gone'}, ${(await rowsOf('merchant_webhook_secrets', 'merchant = $1', [protectedMerchant.address.toLowerCase()])).rows} secret`),
  ];
  report.note(`bytes of the rows strangers made (pg_column_size, before TOAST and indexes): ${expiringMade.bytes} in ${expiringMade.rows} expired verifications, ${failedMade.bytes} in ${failedMade.rows} failed settlements and ${transitionsMade.bytes} in their ${transitionsMade.rows} history rows, ${merchantRowsMade.bytes + secretsMade.bytes + noncesMade.bytes} in ${merchantRowsMade.rows + secretsMade.rows + noncesMade.rows} merchant rows, secrets and nonces; all of it deleted`);
  report.save(); // throws when a check above failed
  expect(ok.every(Boolean)).toBe(true);
}, 240_000);
