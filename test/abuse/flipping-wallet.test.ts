// No free work (issue #22), on the atomic path: a contract-wallet payer that passes every simulation and
// fails on chain — its owner flips its ERC-1271 answer to "no" in a transaction placed just ahead of our
// settle transaction, and back to "yes" just after it. Its items go one at a time
// (CONTRACT_PAYER_MAX_IN_FLIGHT), each failure on chain is counted against the payer, and after
// PAYER_PAUSE_AFTER_FAILURES it is refused before anything is sent, in the worker and at the settle intake.
// Real USDC on anvil (mining by hand while the attacker orders its transactions), the settlement executor,
// the compiled worker.
import { Interface, parseUnits, Wallet } from 'ethers';
import { compileTestContract, deploy } from '../support/solidity';
import { newMerchant } from '../support/chain-actions';
import { PRICE_UNITS, startTestStack, type TestStack } from '../support/test-stack';
import { abuseReport } from './abuse-report';
import { chainCostOf, contractWalletPayment, outcomes, untilFinal } from './chain-costs';
import { setTimeout as sleep } from 'node:timers/promises';

const FEE = 10_000n;
const PAUSE_AFTER = 3;
const MERCHANT_PAUSE_AFTER = 5;
const PAYMENTS = 20;
const WALLET = new Interface(['function setRefusing(bool value)']);
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack({
    executor: true,
    env: { SETTLEMENT_MODE: 'atomic', PAYER_PAUSE_AFTER_FAILURES: String(PAUSE_AFTER), MERCHANT_PAUSE_AFTER_FAILURES: String(MERCHANT_PAUSE_AFTER) },
  });
  await stack.startWorker();
});
afterAll(async () => {
  await stack?.stop();
});

async function flippingWallet(balance: bigint): Promise<string> {
  const wallet = await deploy(stack.devnet.provider, stack.devnet.accounts.deployer.privateKey, compileTestContract('FlippingWallet.sol', 'FlippingWallet'));
  const address = (await wallet.getAddress()).toLowerCase();
  await stack.devnet.mint(address, balance);
  return address;
}

/** Verifies each body (each must pass: the wallets say yes); their verification ids. */
async function verifyAll(bodies: Array<Record<string, unknown>>): Promise<string[]> {
  const ids: string[] = [];
  for (const body of bodies) {
    const v = await stack.http.post('/v1/verify').send(body);
    expect(v.status).toBe(200);
    ids.push(v.body.verification_id as string);
  }
  return ids;
}

/** Settles these verifications at once; the settlements' ids. */
async function settleAll(verificationIds: string[], merchant: string): Promise<string[]> {
  const settles = await Promise.all(verificationIds.map((id) => stack.http.post('/v1/settle').send({ verification_id: id, destination_address: merchant })));
  const ids = settles.map((s) => s.body.settlement_id as string);
  expect(ids.every((id) => typeof id === 'string')).toBe(true);
  return ids;
}

/**
 * The attacker, with the chain mined by hand: whenever a settle transaction of ours waits in the pool, it
 * sends "refuse" to its wallets with the highest tip (ordered ahead of ours) and "accept" with no tip
 * (ordered after ours), and the block is mined. Settles meanwhile, until these settlements are all final.
 * Returns how many blocks it arranged.
 */
async function settleWhileFlipping(wallets: string[], verificationIds: string[], merchant: string) {
  const rpc = stack.devnet.provider;
  // two keys: a block takes one sender's transactions in nonce order, so "accept" (no tip) from the key that
  // sent "refuse" (top tip) would go in right behind it; from another key it waits behind our transaction
  const ahead = new Wallet(stack.devnet.accounts.deployer.privateKey, rpc);
  const behind = new Wallet(Wallet.createRandom().privateKey, rpc);
  await stack.devnet.setEthBalance(behind.address, 10n ** 18n);
  const relayers = new Set(stack.devnet.accounts.relayers.map((r) => r.address.toLowerCase()));
  const gwei = (n: string) => parseUnits(n, 'gwei');
  await rpc.send('evm_setAutomine', [false]);
  let rounds = 0;
  try {
    const ids = await settleAll(verificationIds, merchant);
    const deadline = Date.now() + 60_000;
    for (;;) {
      const open = await stack.db.prisma.settlement.count({ where: { id: { in: ids }, state: { notIn: ['settled', 'failed'] } } });
      if (open === 0) return { ids, rounds };
      if (Date.now() > deadline) throw new Error(`${open} settlements still open while the attacker waits`);
      const pool = (await rpc.send('txpool_content', [])) as { pending: Record<string, Record<string, { maxFeePerGas?: string; gasPrice?: string }>> };
      const ours = Object.entries(pool.pending)
        .filter(([from]) => relayers.has(from.toLowerCase()))
        .flatMap(([, byNonce]) => Object.values(byNonce).map((tx) => BigInt(tx.maxFeePerGas ?? tx.gasPrice ?? '0')));
      if (ours.length === 0) {
        await sleep(50);
        continue;
      }
      // anvil orders a block by fee: "refuse" pays far more than ours, "accept" a little less than the cheapest of ours
      const below = ours.reduce((a, b) => (a < b ? a : b)) - 1n;
      const flip = async (key: Wallet, to: string, refusing: boolean, maxFeePerGas: bigint) =>
        key.sendTransaction({
          to, data: WALLET.encodeFunctionData('setRefusing', [refusing]), nonce: await rpc.getTransactionCount(key.address, 'pending'),
          gasLimit: 60_000n, maxPriorityFeePerGas: maxFeePerGas, maxFeePerGas,
        });
      for (const w of wallets) await flip(ahead, w, true, gwei('1000'));
      for (const w of wallets) await flip(behind, w, false, below);
      await rpc.send('evm_mine', []);
      rounds++;
    }
  } finally {
    await rpc.send('evm_setAutomine', [true]);
  }
}

const reasonOf = (r: { errorDetails: unknown }) => (r.errorDetails as { reason?: string } | null)?.reason;
const minedTxOf = (r: { errorDetails: unknown }) => typeof (r.errorDetails as { tx_hash?: unknown } | null)?.tx_hash === 'string';

it('a wallet that passes every simulation and fails on chain: what it cost before the payer was paused', async () => {
  const report = abuseReport(
    'accounting-4-flipping-wallet',
    'A contract wallet that passes every simulation and fails on chain (atomic path)',
    `a wallet whose owner flips its ERC-1271 answer to "no" just ahead of each of our settle transactions (and back after) sends ${PAYMENTS} payments of 0.01 USDC, settled at once; its balance covers them all`,
  );
  const address = await flippingWallet(100n * PRICE_UNITS);
  const merchant = await newMerchant(stack.devnet, { balance: 100n * FEE, allowance: 100n * FEE });
  const relayers = stack.devnet.accounts.relayers.map((r) => r.address);
  const merchantBefore = await stack.devnet.balanceOf(merchant.address);
  const verificationIds = await verifyAll(Array.from({ length: PAYMENTS }, () => contractWalletPayment(stack, address, merchant.address)));
  const startBlock = await stack.devnet.provider.getBlockNumber();
  const { ids, rounds } = await settleWhileFlipping([address], verificationIds, merchant.address);
  const rows = await untilFinal(stack, ids);
  const cost = await chainCostOf(stack.devnet, relayers, startBlock);
  const failedOnChain = rows.filter(minedTxOf);
  const paused = rows.filter((r) => reasonOf(r) === 'payer paused after repeated failures on chain');
  const pausedUntil = (paused[0]?.errorDetails as { paused_until?: string } | undefined)?.paused_until;

  // and at the intake: a new payment of the paused payer is refused before a settlement is even stored
  const [late] = await verifyAll([contractWalletPayment(stack, address, merchant.address)]);
  const refused = await stack.http.post('/v1/settle').send({ verification_id: late, destination_address: merchant.address });
  const stored = await stack.db.prisma.settlement.count({ where: { verificationId: late } });
  // the victim merchant is not paused by a stranger's failures below its own threshold: an honest payment settles
  const honest = await stack.payment({ to: merchant.address });
  const [honestRow] = await untilFinal(stack, await settleAll(await verifyAll([honest.formB({ seller_address: merchant.address })]), merchant.address));

  report.note(`outcomes: ${outcomes(rows)}; blocks arranged by the attacker: ${rounds}`);
  report.note(`relayer gas spent: ${cost.gasUsed} gas (${cost.wei} wei) in ${cost.transactions} settle transactions; paused until ${pausedUntil}`);
  report.note('without the failure accounting (the worker before it, against a wallet that says yes only at gas price 0): all 20 items failed on chain, 1.56M relayer gas');
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
    honest: report.check('an honest payment to the victim merchant afterwards', 'settled', honestRow.state),
  };
  report.save();
  expect(refused.body.error?.details?.paused_until).toBe(pausedUntil);
  expect(checks).toEqual(Object.fromEntries(Object.keys(checks).map((k) => [k, true])));
});

it('sybil wallets against one merchant: past its threshold it is paused for new payers only; its known payer still settles', async () => {
  const report = abuseReport(
    'accounting-5-sybil-wallets',
    'Many flipping wallets against one merchant',
    `two fresh flipping wallets send 4 payments each to one merchant (pause after ${PAUSE_AFTER} failures per payer, ${MERCHANT_PAUSE_AFTER} per merchant), then a third wallet and a known payer pay it`,
  );
  const merchant = await newMerchant(stack.devnet, { balance: 100n * FEE, allowance: 100n * FEE });
  // the known payer: paid this merchant before the attack
  const before = await stack.payment({ to: merchant.address });
  const [knownFirst] = await untilFinal(stack, await settleAll(await verifyAll([before.formB({ seller_address: merchant.address })]), merchant.address));
  expect(knownFirst.state).toBe('settled');

  const relayers = stack.devnet.accounts.relayers.map((r) => r.address);
  const wallets = [await flippingWallet(10n * PRICE_UNITS), await flippingWallet(10n * PRICE_UNITS)];
  const verificationIds = await verifyAll(wallets.flatMap((w) => Array.from({ length: 4 }, () => contractWalletPayment(stack, w, merchant.address))));
  const startBlock = await stack.devnet.provider.getBlockNumber();
  const { ids } = await settleWhileFlipping(wallets, verificationIds, merchant.address);
  const attack = await untilFinal(stack, ids);
  const cost = await chainCostOf(stack.devnet, relayers, startBlock);
  const failedOnChain = attack.filter(minedTxOf).length;

  const third = await flippingWallet(10n * PRICE_UNITS);
  const [thirdVerification] = await verifyAll([contractWalletPayment(stack, third, merchant.address)]);
  const thirdSettle = await stack.http.post('/v1/settle').send({ verification_id: thirdVerification, destination_address: merchant.address });
  const knownAgain = await stack.payment({ to: merchant.address });
  const [knownRow] = await untilFinal(stack, await settleAll(await verifyAll([knownAgain.formB({ seller_address: merchant.address })]), merchant.address));

  report.note(`attack outcomes: ${outcomes(attack)}; relayer gas ${cost.gasUsed} in ${cost.transactions} settle transactions`);
  report.note('a new honest payer is refused too while the merchant is paused for new payers: the price of stopping fresh sybil payers (docs/decisions.md)');
  const checks = {
    failedOnChain: report.assert(`items failed on chain (at most ${PAUSE_AFTER} per wallet)`, `<= ${2 * PAUSE_AFTER}`, failedOnChain, failedOnChain <= 2 * PAUSE_AFTER),
    reached: report.assert(`merchant threshold reached (${MERCHANT_PAUSE_AFTER})`, `>= ${MERCHANT_PAUSE_AFTER}`, failedOnChain, failedOnChain >= MERCHANT_PAUSE_AFTER),
    third: report.check(
      'a third fresh wallet at /v1/settle',
      '400 settlement_failed merchant',
      `${thirdSettle.status} ${thirdSettle.body.error?.code} ${thirdSettle.body.error?.details?.paused}`,
    ),
    known: report.check("the merchant's known payer, afterwards", 'settled', knownRow.state),
    settledAttack: report.check('attack items settled', 0, attack.filter((r) => r.state === 'settled').length),
  };
  report.save();
  expect(checks).toEqual(Object.fromEntries(Object.keys(checks).map((k) => [k, true])));
});
