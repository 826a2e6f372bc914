// Attacks (c) and (d): a contract-wallet payer that burns gas in its signature check, and errors a job
// cannot recover from (a Safe signature whose v is 31/32, which once threw in the worker forever; a
// settlement whose money state is unknown).
import { hexlify, randomBytes, TypedDataEncoder, Wallet } from 'ethers';
import { authorizationToJson } from '@facilitator/core';
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from '@facilitator/payment-mechanisms';
import { compileTestContract, deploy } from '../support/solidity';
import { createSafe, deploySafeContracts, safeEthSignSignature } from '../support/safe';
import { PRICE_UNITS, startTestStack, type TestStack } from '../support/test-stack';
import { abuseReport } from './abuse-report';
import { setTimeout as sleep } from 'node:timers/promises';

const OPERATOR_KEY = 'abuse-operator-key';
let stack: TestStack;

beforeAll(async () => {
  // (d) settles a Safe payer on the sequential path, which refuses contract-wallet payers unless allowed
  stack = await startTestStack({ env: { API_KEYS: OPERATOR_KEY, SETTLEMENT_MAX_ATTEMPTS: '3', SEQUENTIAL_CONTRACT_PAYERS: 'allow' } });
  await stack.startWorker();
});
afterAll(async () => {
  await stack?.stop();
});

/** A Form B body paying the devnet merchant from a contract wallet (`from`) with any signature bytes. */
function contractPayment(from: string, signature: string, nonce = hexlify(randomBytes(32))) {
  const now = Math.floor(Date.now() / 1000);
  const authorization = authorizationToJson({
    from: from.toLowerCase(), to: stack.devnet.accounts.merchant.address, value: PRICE_UNITS,
    validAfter: BigInt(now - 60), validBefore: BigInt(now + 3600), nonce,
  });
  return { authorization, signature };
}

function formB(payload: { authorization: ReturnType<typeof authorizationToJson>; signature: string }) {
  return {
    transaction_hash: payload.authorization.nonce,
    chain: 'layer2-sepolia',
    seller_address: stack.devnet.accounts.merchant.address,
    expected_amount: PRICE_UNITS.toString(),
    expected_token: stack.devnet.token,
    metadata: { paymentPayload: { x402Version: 1, scheme: 'exact', network: 'layer2-sepolia', payload: payload } },
  };
}

async function settleAndWait(verificationId: string) {
  const created = await stack.http
    .post('/v1/settle')
    .set('x-api-key', OPERATOR_KEY)
    .send({ verification_id: verificationId, destination_address: stack.devnet.accounts.merchant.address });
  expect(created.status).toBe(200);
  const id = created.body.settlement_id as string;
  for (let i = 0; i < 200; i++) {
    const row = await stack.db.prisma.settlement.findUnique({ where: { id } });
    if (row && (row.state === 'settled' || row.state === 'failed')) return row;
    await sleep(100);
  }
  throw new Error(`settlement ${id} never ended`);
}

async function sentTransactions(): Promise<number> {
  const { treasury, relayers } = stack.devnet.accounts;
  const counts = await Promise.all([treasury, ...relayers].map((a) => stack.devnet.provider.getTransactionCount(a.address, 'latest')));
  return counts.reduce((a, b) => a + b, 0);
}

it('(c) a gas-burning contract-wallet payer is refused before any fee; no transaction is sent', async () => {
  const report = abuseReport('c-gas-burner', 'Gas-burning contract-wallet payer', 'a payer contract whose ERC-1271 check burns ~250k gas, then accepts');
  // ~250k gas: within verification's limit for a wallet's check (GAS_CAP_CONTRACT_TRANSFER, 300k), which a
  // check burning more is refused by at verify; with the token's own work the transfer is above that cap
  const wallet = await deploy(stack.devnet.provider, stack.devnet.accounts.deployer.privateKey, compileTestContract('GasBurningWallet.sol', 'GasBurningWallet'), [1000]);
  const address = await wallet.getAddress();
  await stack.devnet.mint(address, 10n * PRICE_UNITS);
  const merchantBefore = await stack.devnet.balanceOf(stack.devnet.accounts.merchant.address);
  const sentBefore = await sentTransactions();
  const verify = await stack.http.post('/v1/verify').send(formB(contractPayment(address, '0x' + 'ab'.repeat(70))));
  expect(verify.status).toBe(200); // the wallet does accept the signature, at a price
  const settlement = await settleAndWait(verify.body.verification_id);
  const details = settlement.errorDetails as Record<string, unknown>;
  const ok = [
    report.check('verification (the wallet accepts the signature)', 200, verify.status),
    report.check('settlement state', 'failed', settlement.state),
    report.check('error code', 'settlement_failed', settlement.errorCode),
    report.check('reason', 'transfer gas estimate is above its cap', details.reason),
    report.check('fee status', 'not_collected', details.fee_status),
    report.check('transactions sent by the treasury and relayers', 0, (await sentTransactions()) - sentBefore),
    report.check('merchant balance change', '0', ((await stack.devnet.balanceOf(stack.devnet.accounts.merchant.address)) - merchantBefore).toString()),
  ];
  report.note(`gas estimate ${details.gas_estimate} against the contract-wallet cap ${details.gas_cap}`);
  report.save();
  expect(ok.every(Boolean)).toBe(true);
});

it('(d) permanent errors end or park the settlement within bounded attempts, and the metric rises', async () => {
  const ok: boolean[] = [];
  const report = abuseReport('d-permanent-errors', 'Errors a settlement job cannot recover from', 'a Safe payer signing eth_sign style (v = 31/32); a settlement whose money state is unknown');
  // 1. the v >= 29 case, fixed at its root: verify and settle agree the token accepts it, so it settles
  const safeContracts = await deploySafeContracts(stack.devnet.provider, stack.devnet.accounts.deployer.privateKey);
  const owner = Wallet.createRandom();
  const safe = await createSafe(safeContracts, owner.address, 1n);
  await stack.devnet.mint(safe, 10n * PRICE_UNITS);
  const payload = contractPayment(safe, '0x');
  const digest = TypedDataEncoder.hash(stack.devnet.eip712Domain, TRANSFER_WITH_AUTHORIZATION_TYPES, payload.authorization);
  payload.signature = await safeEthSignSignature(safeContracts, safe, owner, digest);
  const v = parseInt(payload.signature.slice(-2), 16);
  const verify = await stack.http.post('/v1/verify').send(formB(payload));
  expect(verify.status).toBe(200);
  const settled = await settleAndWait(verify.body.verification_id);
  ok.push(report.check('Safe eth_sign signature: v', 'at least 31', v >= 31 ? 'at least 31' : String(v)));
  ok.push(report.check('Safe eth_sign signature: settlement state', 'settled', settled.state));

  // 2. a settlement in `executing` with no transfer stored: a broken invariant (permanent), money state open
  const p = await stack.payment();
  const verified = await stack.http.post('/v1/verify').send(p.formB());
  await stack.killWorkers();
  const created = await stack.http
    .post('/v1/settle')
    .send({ verification_id: verified.body.verification_id, destination_address: stack.devnet.accounts.merchant.address });
  const id = created.body.settlement_id as string;
  await stack.db.prisma.settlement.update({ where: { id }, data: { state: 'executing' } });
  const restarted = await stack.startWorker();
  let parked = null;
  for (let i = 0; i < 100 && !parked?.attentionAt; i++) {
    await sleep(100);
    parked = await stack.db.prisma.settlement.findUnique({ where: { id } });
  }
  const queues = await stack.http.get('/v1/queues').set('x-api-key', OPERATOR_KEY);
  const metrics = await stack.http.get('/metrics');
  const gauge = /^x402_settlements_needing_attention\{[^}]*\} (\d+)/m.exec(metrics.text)?.[1];
  const attempts = restarted.lines.filter((l) => l.includes(id) && l.includes('settlement step failed')).length;
  ok.push(report.check('unknown money state: settlement kept in', 'executing', parked?.state));
  ok.push(report.check('parked for an operator', true, Boolean(parked?.attentionAt)));
  ok.push(report.check('retries of a permanent error', 0, attempts));
  ok.push(report.check('x402_settlements_needing_attention', '1', gauge));
  ok.push(report.check('/v1/queues lists it', id, queues.body.settlements_needing_attention?.oldest?.[0]?.id));
  const resolved = await stack.http
    .post(`/v1/settlements/${id}/resolve`)
    .set('x-api-key', OPERATOR_KEY)
    .send({ outcome: 'failed', note: 'no transfer was ever sent (checked on chain)' });
  const openResolve = await stack.http.post(`/v1/settlements/${id}/resolve`).send({ outcome: 'failed', note: 'x' });
  ok.push(report.check('operator resolves it', 'failed', resolved.body.state));
  ok.push(report.check('resolve without the operator key', 401, openResolve.status));
  const after = await stack.http.get('/v1/queues').set('x-api-key', OPERATOR_KEY);
  ok.push(report.check('needing attention after resolving', 0, after.body.settlements_needing_attention?.count));
  report.save();
  expect(ok.every(Boolean)).toBe(true);
});
