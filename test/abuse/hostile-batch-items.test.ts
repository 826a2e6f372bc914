// Attack (issue 22, 4): contract-wallet payers with multi-kilobyte signatures that burn their gas on chain,
// settled at the same time as honest payments on the atomic path. Before, they shared the honest items'
// settle transaction and its gas envelope did not count their calldata: a few of them ran the whole
// transaction out of gas (honest items failed) or pushed its estimate above the cap (every item parked).
// Now each item's calldata is in its envelope, signatures are capped at 4,096 bytes, and an item whose
// payer has code is sent in a transaction of its own, so a hostile wallet only sinks its own.
import { randomBytes } from 'node:crypto';
import { hexlify } from 'ethers';
import { setTimeout as sleep } from 'node:timers/promises';
import { authorizationToJson } from '@facilitator/core';
import { compileTestContract, deploy } from '../support/solidity';
import { PRICE_UNITS, startTestStack, type TestStack } from '../support/test-stack';
import { abuseReport } from './abuse-report';
import { x402V2Request } from '../support/x402-request';

const HONEST = 6;
const HOSTILE = 3;
const SIGNATURE_BYTES = 4_000;
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack({ executor: true, env: { SETTLEMENT_MODE: 'atomic', BATCH_WINDOW_MS: '1500' } });
  const worker = await stack.startWorker();
  for (let i = 0; i < 600 && !worker.lines.some((l) => l.includes('settlements are atomic')); i++) await sleep(50);
}, 60_000);
afterAll(async () => {
  await stack?.stop();
});

/** A Form B body paying the devnet merchant from a contract wallet with any signature bytes. */
function contractPayment(from: string, signature: string) {
  const now = Math.floor(Date.now() / 1000);
  const authorization = authorizationToJson({
    from: from.toLowerCase(),
    to: stack.devnet.accounts.merchant.address,
    value: PRICE_UNITS,
    validAfter: BigInt(now - 60),
    validBefore: BigInt(now + 3600),
    nonce: hexlify(randomBytes(32)),
  });
  return {
    transaction_hash: authorization.nonce,
    chain: 'layer2-sepolia',
    seller_address: stack.devnet.accounts.merchant.address,
    expected_amount: PRICE_UNITS.toString(),
    expected_token: stack.devnet.token,
    metadata: { paymentPayload: { x402Version: 1, scheme: 'exact', network: 'layer2-sepolia', payload: { authorization, signature } } },
  };
}

function x402Body(from: string, signature: string) {
  const { authorization } = contractPayment(from, signature).metadata.paymentPayload.payload;
  const terms = { payTo: stack.devnet.accounts.merchant.address, amount: PRICE_UNITS, asset: stack.devnet.token, maxTimeoutSeconds: 300, resource: 'http://merchant.test/a' };
  return x402V2Request(authorization, signature, terms);
}

async function statesOf(verificationIds: string[]) {
  return stack.db.prisma.settlement.findMany({ where: { verificationId: { in: verificationIds } } });
}

async function gasUsedOf(batchId: string): Promise<bigint> {
  const tx = await stack.db.prisma.chainTransaction.findFirst({ where: { settlementId: batchId, purpose: 'settle' } });
  const receipt = tx?.minedHash ? await stack.devnet.provider.getTransactionReceipt(tx.minedHash) : null;
  return receipt?.gasUsed ?? 0n;
}

it('a batch with hostile items: honest items settled N/N, hostile items in their own transactions', async () => {
  const report = abuseReport(
    'hostile-batch-items',
    'Hostile contract-wallet items among honest ones in atomic batches',
    `${HONEST} honest payments settled together with ${HOSTILE} contract-wallet payments whose ${SIGNATURE_BYTES}-byte signatures pass verification and pre-flight, after which the wallets burn all their gas on chain (BATCH_WINDOW_MS=1500)`,
  );
  const merchant = stack.devnet.accounts.merchant.address;
  const compiled = compileTestContract('SwitchBurningWallet.sol', 'SwitchBurningWallet');
  const wallets = [];
  for (let i = 0; i < HOSTILE; i++) wallets.push(await deploy(stack.devnet.provider, stack.devnet.accounts.deployer.privateKey, compiled));
  for (const w of wallets) await stack.devnet.mint(await w.getAddress(), 10n * PRICE_UNITS);
  const hostileSignature = '0x' + 'a5'.repeat(SIGNATURE_BYTES);

  // the cap: one byte more than 4,096 is a clear 400 on /v1 and invalid_payload on /x402
  const wallet0 = await wallets[0].getAddress();
  const tooLongV1 = await stack.http.post('/v1/verify').send(contractPayment(wallet0, '0x' + 'a5'.repeat(4097)));
  const tooLongX402 = await stack.http.post('/x402/verify').send(x402Body(wallet0, '0x' + 'a5'.repeat(4097)));

  const honestIds: string[] = [];
  for (let i = 0; i < HONEST; i++) {
    const v = await stack.http.post('/v1/verify').send((await stack.payment()).formB());
    expect(v.status).toBe(200);
    honestIds.push(v.body.verification_id);
  }
  const hostileIds: string[] = [];
  for (const w of wallets) {
    const v = await stack.http.post('/v1/verify').send(contractPayment(await w.getAddress(), hostileSignature));
    expect(v.status).toBe(200);
    hostileIds.push(v.body.verification_id);
  }
  const treasury = stack.devnet.accounts.treasury.address;
  const treasuryBefore = await stack.devnet.balanceOf(treasury);

  // `.then` sends the request now (supertest sends lazily)
  const settles = [...hostileIds, ...honestIds].map((id) => stack.http.post('/v1/settle').send({ verification_id: id, destination_address: merchant }).then((r) => r));
  // the wallets switch once their payments passed every check and wait in collect_fee for their batch
  for (let i = 0; i < 400; i++) {
    const rows = await statesOf(hostileIds);
    if (rows.length === HOSTILE && rows.every((r) => r.state === 'collect_fee')) break;
    await sleep(10);
  }
  const switchedInCollectFee = (await statesOf(hostileIds)).filter((r) => r.state === 'collect_fee').length;
  for (const w of wallets) await (await (w as unknown as { setBurning(b: boolean): Promise<{ wait(): Promise<unknown> }> }).setBurning(true)).wait();
  await Promise.all(settles);

  let rows = await statesOf([...honestIds, ...hostileIds]);
  for (let i = 0; i < 600 && rows.some((r) => r.state !== 'settled' && r.state !== 'failed' && !r.attentionAt); i++) {
    await sleep(50);
    rows = await statesOf([...honestIds, ...hostileIds]);
  }
  const honest = rows.filter((r) => honestIds.includes(r.verificationId));
  const hostile = rows.filter((r) => hostileIds.includes(r.verificationId));
  const items = await stack.db.prisma.settlementBatchItem.findMany({ where: { settlementId: { in: rows.map((r) => r.id) } }, include: { batch: true } });
  const batchOf = new Map(items.map((i) => [i.settlementId, i.batch]));
  const hostileBatches = hostile.map((r) => batchOf.get(r.id));
  const honestBatchIds = new Set(honest.map((r) => batchOf.get(r.id)?.id));
  const shared = hostileBatches.filter((b) => b && honestBatchIds.has(b.id)).length;
  const hostileGas = await Promise.all(hostileBatches.map((b) => (b ? gasUsedOf(b.id) : Promise.resolve(0n))));
  const honestGas = await Promise.all([...honestBatchIds].map((id) => (id ? gasUsedOf(id) : Promise.resolve(0n))));
  const withinEnvelope = hostileBatches.every((b, i) => b !== undefined && hostileGas[i] > 0n && hostileGas[i] <= BigInt(b.gasCap));
  const feesCollected = (await stack.devnet.balanceOf(treasury)) - treasuryBefore;

  const checks = [
    report.check('a 4,097-byte signature: /v1/verify', '400 invalid_request', `${tooLongV1.status} ${tooLongV1.body.error?.code}`),
    report.check('a 4,097-byte signature: /x402/verify', 'invalid_payload', tooLongX402.body.invalidReason),
    report.check('hostile wallets switched while their payments waited in collect_fee', HOSTILE, switchedInCollectFee),
    report.check('honest items settled', `${HONEST}/${HONEST}`, `${honest.filter((r) => r.state === 'settled').length}/${HONEST}`),
    report.check('hostile items in transactions of their own (batch of 1)', HOSTILE, hostileBatches.filter((b) => b?.itemCount === 1).length),
    report.check('transactions holding honest and hostile items together', 0, shared),
    report.check('hostile items failed, released, nothing charged', HOSTILE, hostile.filter((r) => r.state === 'failed' && r.paymentKey === null && (r.errorDetails as { merchant_charged?: boolean }).merchant_charged === false).length),
    report.check("each hostile transaction's gas within its own envelope (calldata counted)", true, withinEnvelope),
    report.check('fees collected (the honest payments only)', String(BigInt(HONEST) * stack.config.feeAmount), String(feesCollected)),
    report.check('settlements parked for an operator', 0, rows.filter((r) => r.attentionAt).length),
  ];
  report.note(
    `gas the hostile items cost our relayers: ${hostileGas.map(String).join(' + ')} = ${hostileGas.reduce((a, b) => a + b, 0n)} (their envelopes: ${hostileBatches.map((b) => b?.gasCap).join(', ')}); honest transactions: ${honestBatchIds.size}, gas ${honestGas.map(String).join(', ')}`,
  );
  report.save();
  expect(checks.every(Boolean)).toBe(true);
  expect(honest.every((r) => r.state === 'settled')).toBe(true);
  expect(shared).toBe(0);
  expect(tooLongV1.status).toBe(400);
}, 120_000);
