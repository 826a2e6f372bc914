// Issue 22, "make the relayers pay for failing items": a contract-wallet payer whose isValidSignature says
// yes only when tx.gasprice is 0, i.e. only in a simulation run without fee fields. The pre-flight now
// simulates the transfer with the fee fields (and gas limit) the real transaction carries, so the wallet
// is refused there, before any fee or gas.
import { randomBytes } from 'node:crypto';
import { hexlify } from 'ethers';
import type { TransferAuthorization } from '@facilitator/core';
import { compileTestContract, deploy } from '../support/solidity';
import { PRICE_UNITS, startTestStack, type TestStack } from '../support/test-stack';
import { abuseReport } from './abuse-report';
import { setTimeout as sleep } from 'node:timers/promises';
import { formBVerifyRequest } from '../support/contract-payer-requests';

let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack();
  await stack.startWorker();
}, 60_000);
afterAll(async () => {
  await stack?.stop();
});

/** What the treasury and the relayers hold in ETH, and how many transactions they have mined. */
async function senders(): Promise<{ wei: bigint; sent: number }> {
  const { treasury, relayers } = stack.devnet.accounts;
  const addresses = [treasury, ...relayers].map((a) => a.address);
  const [balances, counts] = await Promise.all([
    Promise.all(addresses.map((a) => stack.devnet.provider.getBalance(a))),
    Promise.all(addresses.map((a) => stack.devnet.provider.getTransactionCount(a, 'latest'))),
  ]);
  return { wei: balances.reduce((a, b) => a + b, 0n), sent: counts.reduce((a, b) => a + b, 0) };
}

it('a wallet that accepts only at tx.gasprice 0 is refused at pre-flight: no fee, no gas', async () => {
  const report = abuseReport(
    'simulation-only-wallet',
    'Simulation-only contract-wallet payer',
    'a payer contract whose isValidSignature answers yes only when tx.gasprice == 0 (a simulation without fee fields), so it passes verification and any fee-less dry run but fails when mined',
  );
  const { provider, accounts } = stack.devnet;
  const wallet = (await (await deploy(provider, accounts.deployer.privateKey, compileTestContract('HostileWallets.sol', 'SimulationOnlyWallet'))).getAddress()).toLowerCase();
  await stack.devnet.mint(wallet, 10n * PRICE_UNITS);
  const authorization: TransferAuthorization = {
    from: wallet,
    to: accounts.merchant.address,
    value: PRICE_UNITS,
    validAfter: 0n,
    validBefore: BigInt(Math.floor(Date.now() / 1000) + 3600),
    nonce: hexlify(randomBytes(32)),
  };
  const merchantBefore = await stack.devnet.balanceOf(accounts.merchant.address);
  const before = await senders();
  const verify = await stack.http.post('/v1/verify').send(formBVerifyRequest(stack.devnet, authorization, '0x' + 'ab'.repeat(65)));
  // verification is an eth_call too: the wallet says yes there, which is why the pre-flight must not be one
  expect(verify.status).toBe(200);
  const created = await stack.http.post('/v1/settle').send({ verification_id: verify.body.verification_id, destination_address: accounts.merchant.address });
  expect(created.status).toBe(200);
  const id = created.body.settlement_id as string;
  let row = await stack.db.prisma.settlement.findUnique({ where: { id } });
  for (let i = 0; i < 200 && row?.state !== 'settled' && row?.state !== 'failed'; i++) {
    await sleep(50);
    row = await stack.db.prisma.settlement.findUnique({ where: { id } });
  }
  const transitions = (await stack.db.prisma.settlementTransition.findMany({ where: { settlementId: id }, orderBy: { id: 'asc' } })).map((t) => t.toState);
  const after = await senders();
  const details = (row?.errorDetails ?? {}) as Record<string, unknown>;
  const merchantChange = (await stack.devnet.balanceOf(accounts.merchant.address)) - merchantBefore;
  const rows = [
    report.check('verification (an eth_call at gasprice 0)', 200, verify.status),
    report.check('settlement state', 'failed', row?.state),
    report.check('states (refused at pre-flight)', 'pending -> failed', transitions.join(' -> ')),
    report.check('reason', 'FiatTokenV2: invalid signature', details.reason),
    report.check('fee status', 'not_collected', details.fee_status),
    report.check('transactions sent by the treasury and relayers', 0, after.sent - before.sent),
    report.check('gas spent by the treasury and relayers (wei)', '0', (before.wei - after.wei).toString()),
    report.check('merchant balance change', '0', merchantChange.toString()),
  ];
  report.save();
  expect(row?.state).toBe('failed');
  expect(transitions.join(' -> ')).toBe('pending -> failed');
  expect(details).toMatchObject({ reason: 'FiatTokenV2: invalid signature', fee_status: 'not_collected' });
  expect(after.sent - before.sent).toBe(0);
  expect(before.wei - after.wei).toBe(0n);
  expect(merchantChange).toBe(0n);
  expect(rows.every(Boolean)).toBe(true);
});
