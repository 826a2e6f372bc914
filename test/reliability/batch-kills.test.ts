// Scenario (issue 14): the worker is SIGKILLed while batches of atomic settlements are being stored, sent
// and mined (1 s blocks), so kills land between a batch's storing and its sending, and while it is mined.
// Run twice: with local relayer keys, and (issue 24, custody) with one relayer key in a PKCS#11 HSM
// (SoftHSM2, the key never leaves it) and one in AWS KMS (a local server speaking KMS's protocol and
// signing with a real key); in both the worker holds no treasury key.
import { setTimeout as sleep } from 'node:timers/promises';
import { executorTargets } from '@facilitator/payment-mechanisms';
import { setUpExecutor } from '@facilitator/evm-executor';
import { createSoftHsmToken, startKmsProtocolServer, type KmsProtocolServer, type SoftHsmToken } from '@facilitator/signers/testing';
import { startTestStack, TestStack } from '../support/test-stack';
import { describeNeeding, softhsmMissing } from '../support/system-tools';
import { checkLedger, ledgerStart, startSettlement, verifyMany, waitAllFinal } from './flows';
import { ScenarioReport } from './scenario-report';

const COUNT = 30;
const ATOMIC = { SETTLEMENT_MODE: 'atomic', BATCH_WINDOW_MS: '300' };
const DEVNET = { blockTime: 1, payerBalance: 10n ** 9n };

/** Three SIGKILLs while 30 settlements arrive in bursts of 10; every settlement ends settled, once. */
async function killWhileBatching(stack: TestStack, report: ScenarioReport): Promise<void> {
  const verificationIds = await verifyMany(stack, COUNT);
  const ledger = await ledgerStart(stack);
  let worker = await stack.startWorker(ATOMIC, { treasuryKey: false });
  const settlementIds: string[] = [];
  const batchedNotMined = () =>
    stack.db.prisma.$queryRaw<Array<{ n: bigint }>>`
      SELECT count(*) AS n FROM settlement_batches b
        LEFT JOIN chain_transactions t ON t.settlement_id = b.id AND t.purpose = 'settle'
       WHERE t.id IS NULL OR t.status IN ('allocated', 'signed', 'broadcast')`.then((r) => Number(r[0].n));
  const interrupted: number[] = [];
  for (let burst = 0; burst < 3; burst++) {
    settlementIds.push(...(await Promise.all(verificationIds.slice(burst * 10, burst * 10 + 10).map((id) => startSettlement(stack, id)))));
    // the kill lands while a batch of this burst is stored but not yet mined: a random moment in that window
    for (let wait = 0; wait < 200 && (await batchedNotMined()) === 0; wait++) await sleep(10);
    await sleep(Math.floor(Math.random() * 300));
    interrupted.push(await batchedNotMined());
    worker.child.kill('SIGKILL');
    await worker.exited;
    worker = await stack.startWorker(ATOMIC, { treasuryKey: false });
  }
  const open = await waitAllFinal(stack, settlementIds, 120_000);
  const batches = await stack.db.prisma.settlementBatch.findMany({ select: { itemCount: true } });
  report.note(`batches stored but not yet mined at each kill: ${interrupted.join(', ')}; batch sizes: ${batches.map((b) => b.itemCount).join(', ')}`);
  expect(report.check('settlements still open at the end', 0, open)).toBe(true);
  expect(report.assert('kills that landed while a batch was in flight', 'at least 1', interrupted.filter((n) => n > 0).length, interrupted.some((n) => n > 0))).toBe(true);
  expect(report.assert('batches that held more than one settlement', 'at least 1', batches.filter((b) => b.itemCount > 1).length, batches.some((b) => b.itemCount > 1))).toBe(true);
  expect(await checkLedger(report, stack, { settlementIds, verificationIds, ...ledger, atomic: true })).toBe(true);
}

describe('local relayer keys', () => {
  const report = new ScenarioReport(
    '11-batch-kills',
    'Worker SIGKILLed while atomic settlements are batched',
    '3 SIGKILLs of the worker while 30 settlements arrive in bursts of 10 and share executor transactions (atomic path, BATCH_WINDOW_MS=300, 1 s blocks)',
  );
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startTestStack({ executor: true, devnet: DEVNET });
  });
  afterAll(async () => {
    await stack?.stop();
    // last: it throws when a check failed, after the clean-up
    report.save();
  });

  it('every settlement ends settled, each in exactly one batch, with no fee or transfer twice', () => killWhileBatching(stack, report), 240_000);
});

describeNeeding(softhsmMissing(), 'relayer keys in an HSM (SoftHSM2) and in AWS KMS (protocol server)', () => {
  const report = new ScenarioReport(
    '11b-batch-kills-hsm-kms',
    'Worker SIGKILLed while atomic settlements are batched, relayer keys in an HSM and in KMS',
    '3 SIGKILLs of the worker while 30 settlements arrive in bursts of 10 (atomic path, 1 s blocks); its two relayer keys are a SoftHSM2 key (PKCS#11) and a KMS key (AWS JSON protocol, SigV4), and it holds no private key at all',
  );
  let stack: TestStack;
  let kms: KmsProtocolServer;
  let hsm: SoftHsmToken;
  let senders: string[];
  beforeAll(async () => {
    [kms, hsm] = await Promise.all([startKmsProtocolServer(), createSoftHsmToken({ label: 'relayers' })]);
    const kmsKey = kms.createKey({ alias: 'alias/relayer-kms' });
    const hsmKey = await hsm.generateKey('relayer-hsm', { pin: 'file' });
    senders = [hsmKey.address, kmsKey.address];
    stack = await startTestStack({
      devnet: DEVNET,
      env: { RELAYER_PRIVATE_KEYS: undefined, RELAYER_SIGNERS: `${hsmKey.uri},kms:${kmsKey.arn}`, ...kms.env, ...hsm.env },
    });
    const { devnet } = stack;
    for (const address of senders) await devnet.setEthBalance(address, 10n ** 19n);
    // the executor names exactly these two relayers; a devnet account pays for its deployment
    const status = await setUpExecutor(
      devnet.provider,
      {
        chainId: devnet.chainId,
        token: devnet.token,
        targets: executorTargets({ chainId: devnet.chainId, tokenAddress: devnet.token.toLowerCase() }),
        treasury: devnet.accounts.treasury.address,
        fee: stack.config.feeAmount,
        relayers: senders,
      },
      { treasuryKey: devnet.accounts.treasury.privateKey, senderKey: devnet.accounts.relayers[0].privateKey },
    );
    if (status.state !== 'ready') throw new Error(`executor not set up: ${status.why}`);
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
    await kms?.close();
    await hsm?.destroy();
    report.save();
  });

  it('every settlement ends settled once, every batch sent by the HSM or the KMS key, both used', async () => {
    await killWhileBatching(stack, report);
    // each worker above began its turn at the first key (the HSM's) and may have sent a single batch before
    // its kill, so the kills alone need not use both keys (seen under load: 3 batches, all the HSM's). The
    // last worker, left running, now settles two payments one after the other: two batches, which take the
    // keys in turn, so a batch signed in KMS is settled too
    const tail: string[] = [];
    for (const verificationId of await verifyMany(stack, 2)) {
      const id = await startSettlement(stack, verificationId);
      await waitAllFinal(stack, [id], 60_000);
      tail.push(id);
    }
    const tailSettled = await stack.db.prisma.settlement.count({ where: { id: { in: tail }, state: 'settled' } });
    expect(report.check('payments settled one after the other by the last worker (a batch each)', 2, tailSettled)).toBe(true);
    const sent = await stack.db.prisma.chainTransaction.findMany({ where: { purpose: 'settle' }, select: { fromAddress: true } });
    const by = (address: string) => sent.filter((t) => t.fromAddress === address.toLowerCase()).length;
    expect(report.check('settle transactions sent by another key', 0, sent.length - by(senders[0]) - by(senders[1]))).toBe(true);
    expect(report.assert('settle transactions sent by the HSM key, by the KMS key', 'at least 1 each', `${by(senders[0])}, ${by(senders[1])}`, by(senders[0]) > 0 && by(senders[1]) > 0)).toBe(true);
    expect(report.assert('KMS Sign calls', 'at least one per KMS-sent transaction', kms.callCount('Sign'), kms.callCount('Sign') >= by(senders[1]))).toBe(true);
  }, 240_000);
});
