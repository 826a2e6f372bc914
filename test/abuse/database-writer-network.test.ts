// Attack (issue 42 item 5, the network column): a database writer (a compromised API process) copies a verified
// payment's verification with another `network` than its chain's, then settles the copy through the API's own
// Form B. The payment key is spelt from the verification's network (paymentKeyOf), so the copy's key was not the
// honest row's: the API started a second live settlement of the one payment, and on the sequential path, while
// the first was still queued, the worker's treasury charged the merchant a fee for each. Now the database refuses
// a row whose network is not its chain's (20261129063000), and behind it the API keys no such row and the worker
// settles none (their unit tests: payment-key.test.ts, settlement-machine.test.ts).
// Real USDC on anvil, the compiled worker (holding the treasury key, sequential path), the API in process.
import { randomBytes } from 'node:crypto';
import { asApiRole } from './api-role';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestStack, PRICE_UNITS, type TestStack } from '../support/test-stack';
import { abuseReport } from './abuse-report';

let stack: TestStack;

beforeAll(async () => {
  // no worker yet: the honest settlement stays queued while the writer makes its copies
  stack = await startTestStack();
}, 60_000);
afterAll(async () => {
  await stack?.stop();
});

const SOLANA_DEVNET = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';


async function settlementOf(verificationId: string): Promise<string | undefined> {
  for (let i = 0; i < 100; i++) {
    const row = await stack.db.prisma.settlement.findFirst({ where: { verificationId }, select: { id: true } });
    if (row) return row.id;
    await sleep(20);
  }
  return undefined;
}

async function finalState(settlementId: string): Promise<string> {
  for (let i = 0; i < 1200; i++) {
    const row = await stack.db.prisma.settlement.findUniqueOrThrow({ where: { id: settlementId } });
    if (row.state === 'settled' || row.state === 'failed') return row.state;
    await sleep(50);
  }
  return 'not final';
}

it("(insider, network) a verification copied with another network than its chain's: refused by the database, one fee", async () => {
  const report = abuseReport(
    'insider-network-copies',
    "A database writer copies a verified payment with another network than its chain's",
    "as the API's database role: two copies of a verified payment's verification on chain 84532, one naming solana's devnet and one eip155:1, while the payment's own settlement is still queued; the solana-named copy settled through Form B; then a worker holding the treasury key (sequential path) runs what is queued",
  );
  const { merchant, treasury } = stack.devnet.accounts;
  const treasuryBefore = await stack.devnet.balanceOf(treasury.address);
  const merchantBefore = await stack.devnet.balanceOf(merchant.address);

  const v = await stack.http.post('/v1/verify').send((await stack.payment()).formB());
  expect(v.status).toBe(200);
  const honestVerification: string = v.body.verification_id;
  await stack.http.post('/v1/settle').send({ verification_id: honestVerification, destination_address: merchant.address });
  const honest = await settlementOf(honestVerification);

  const api = await asApiRole(stack);
  const copies: Record<string, string> = { [SOLANA_DEVNET]: `ver_copy${randomBytes(12).toString('hex')}`, 'eip155:1': `ver_copy${randomBytes(12).toString('hex')}` };
  const refusals: Record<string, string> = {};
  try {
    for (const [network, id] of Object.entries(copies)) {
      refusals[network] = await api.client
        .query(
          `INSERT INTO verifications SELECT (jsonb_populate_record(v, jsonb_build_object('id', $2::text, 'network', $3::text, 'network_name', $3::text))).* FROM verifications v WHERE v.id = $1`,
          [honestVerification, id, network],
        )
        .then(
          () => 'stored',
          (err: { code?: string }) => `refused (${err.code})`,
        );
    }
  } finally {
    await api.client.end();
  }
  const bySolana = await stack.http.post('/v1/settle').send({ verification_id: copies[SOLANA_DEVNET], destination_address: merchant.address });
  const copiesSettling = await stack.db.prisma.settlement.count({ where: { verificationId: { in: Object.values(copies) } } });

  await stack.startWorker();
  const honestEnd = honest ? await finalState(honest) : 'no settlement';
  const payment = await stack.db.prisma.settlement.findUniqueOrThrow({ where: { id: honest! } });
  const settledOfPayment = await stack.db.prisma.settlement.count({ where: { chainId: 84532, payer: payment.payer, nonce: payment.nonce, state: 'settled' } });
  const treasuryAfter = await stack.devnet.balanceOf(treasury.address);
  const merchantAfter = await stack.devnet.balanceOf(merchant.address);
  await stack.killWorkers();
  await api.drop();

  const fee = stack.config.feeAmount;
  const checks = [
    report.check("the copy naming solana's devnet on chain 84532 (check_violation: a row's network is its chain's)", 'refused (23514)', refusals[SOLANA_DEVNET]),
    report.check('the copy naming eip155:1 on chain 84532', 'refused (23514)', refusals['eip155:1']),
    report.check('settle of the copy that was never stored', 404, bySolana.status),
    report.check('settlements started for the copies', 0, copiesSettling),
    report.check("the payment's own settlement", 'settled', honestEnd),
    report.check('settlements of the payment reported settled', 1, settledOfPayment),
    report.check('fees the treasury received for the one payment (its USDC gained / FEE_AMOUNT)', '1', ((treasuryAfter - treasuryBefore) / fee).toString()),
    report.check("the merchant's balance afterwards (paid once, one fee)", (merchantBefore + PRICE_UNITS - fee).toString(), merchantAfter.toString()),
  ];
  report.save();
  expect(checks.every(Boolean)).toBe(true);
}, 180_000);
