// No free work (issue #22), on the atomic path: a contract-wallet payer that passes every simulation and
// fails on chain. Its items go one at a time (CONTRACT_PAYER_MAX_IN_FLIGHT), each failure on chain is
// counted against the payer, and after PAYER_PAUSE_AFTER_FAILURES it is refused before anything is sent,
// in the worker and at the settle intake. Real USDC on anvil, the settlement executor, the compiled worker.
import { compileTestContract, deploy } from '../support/solidity';
import { newMerchant } from '../support/chain-actions';
import { PRICE_UNITS, startTestStack, type TestStack } from '../support/test-stack';
import { abuseReport } from './abuse-report';
import { chainCostOf, contractWalletPayment, outcomes, untilFinal } from './chain-costs';

const FEE = 10_000n;
const PAUSE_AFTER = 3;
const PAYMENTS = 20;
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack({ executor: true, env: { SETTLEMENT_MODE: 'atomic', PAYER_PAUSE_AFTER_FAILURES: String(PAUSE_AFTER) } });
  await stack.startWorker();
});
afterAll(async () => {
  await stack?.stop();
});

it('a simulation-only wallet: what it cost before the payer was paused', async () => {
  const report = abuseReport(
    'accounting-4-simulation-only-wallet',
    'A contract wallet that passes every simulation and fails on chain (atomic path)',
    `a wallet whose ERC-1271 check says yes only at gas price 0 (every eth_call and estimate) sends ${PAYMENTS} payments of 0.01 USDC, settled at once; its balance covers them all`,
  );
  const wallet = await deploy(stack.devnet.provider, stack.devnet.accounts.deployer.privateKey, compileTestContract('SimulationOnlyWallet.sol', 'SimulationOnlyWallet'));
  const address = (await wallet.getAddress()).toLowerCase();
  await stack.devnet.mint(address, 100n * PRICE_UNITS);
  const merchant = await newMerchant(stack.devnet, { balance: 100n * FEE, allowance: 100n * FEE });
  const relayers = stack.devnet.accounts.relayers.map((r) => r.address);
  const startBlock = await stack.devnet.provider.getBlockNumber();
  const merchantBefore = await stack.devnet.balanceOf(merchant.address);

  const verificationIds: string[] = [];
  for (let i = 0; i < PAYMENTS; i++) {
    const v = await stack.http.post('/v1/verify').send(contractWalletPayment(stack, address, merchant.address));
    expect(v.status).toBe(200); // the wallet passes the verify simulation
    verificationIds.push(v.body.verification_id as string);
  }
  const settles = await Promise.all(
    verificationIds.map((id) => stack.http.post('/v1/settle').send({ verification_id: id, destination_address: merchant.address })),
  );
  const ids = settles.map((s) => s.body.settlement_id as string);
  expect(ids.every((id) => typeof id === 'string')).toBe(true);
  const rows = await untilFinal(stack, ids);
  const cost = await chainCostOf(stack.devnet, relayers, startBlock);
  const failedOnChain = rows.filter((r) => r.state === 'failed' && typeof (r.errorDetails as { tx_hash?: unknown } | null)?.tx_hash === 'string');
  const paused = rows.filter((r) => (r.errorDetails as { reason?: string } | null)?.reason === 'payer paused after repeated failures on chain');
  const pausedUntil = (paused[0]?.errorDetails as { paused_until?: string } | undefined)?.paused_until;

  // and at the intake: a new payment of the paused payer is refused before a settlement is even stored
  const late = await stack.http.post('/v1/verify').send(contractWalletPayment(stack, address, merchant.address));
  const refused = await stack.http.post('/v1/settle').send({ verification_id: late.body.verification_id, destination_address: merchant.address });
  const stored = await stack.db.prisma.settlement.count({ where: { verificationId: late.body.verification_id } });

  report.note(`outcomes: ${outcomes(rows)}`);
  report.note(`relayer gas spent: ${cost.gasUsed} gas (${cost.wei} wei) in ${cost.transactions} settle transactions; paused until ${pausedUntil}`);
  report.note('without the failure accounting (this test against the worker before it): all 20 items failed on chain, 1.56M relayer gas');
  const checks = {
    failedOnChain: report.assert(`items failed on chain before the pause (at most ${PAUSE_AFTER})`, `<= ${PAUSE_AFTER}`, failedOnChain.length, failedOnChain.length <= PAUSE_AFTER),
    transactions: report.assert(`settle transactions mined by the relayers (at most ${PAUSE_AFTER})`, `<= ${PAUSE_AFTER}`, cost.transactions, cost.transactions <= PAUSE_AFTER),
    gas: report.assert('relayer gas spent, at most 200k per failed item', `<= ${200_000 * PAUSE_AFTER}`, cost.gasUsed.toString(), cost.gasUsed <= 200_000n * BigInt(PAUSE_AFTER)),
    paused: report.check('items refused by the pause, nothing sent', PAYMENTS - failedOnChain.length, paused.length),
    pausedUntil: report.assert('the refusal says until when', 'an ISO time', pausedUntil, typeof pausedUntil === 'string' && !Number.isNaN(Date.parse(pausedUntil))),
    settled: report.check('items settled', 0, rows.filter((r) => r.state === 'settled').length),
    merchant: report.check('merchant balance change (atomic: fees of failed items returned)', '0', ((await stack.devnet.balanceOf(merchant.address)) - merchantBefore).toString()),
    intake: report.check('a new payment of the paused payer at /v1/settle', '400 settlement_failed', `${refused.status} ${refused.body.error?.code}`),
    intakeStored: report.check('settlements stored for it', 0, stored),
  };
  report.save();
  expect(late.status).toBe(200);
  expect(refused.body.error?.details?.paused_until).toBe(pausedUntil);
  expect(checks).toEqual(Object.fromEntries(Object.keys(checks).map((k) => [k, true])));
});
