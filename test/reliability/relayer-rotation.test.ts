// Scenario (issue 24, item 5): relayer keys rotated while atomic settlements keep arriving. A key is added
// (workers first, then the executor) and another retired (workers first, then the executor), with
// `executor setup` run for each new relayer set, each worker stopped with SIGTERM as a rolling deploy
// would. Nothing may be lost, nothing doubled, no batch may revert, and no worker may wait for the atomic
// path in between. Workers hold no treasury key; 1 s blocks.
import { setTimeout as sleep } from 'node:timers/promises';
import { executorTargets } from '@facilitator/payment-mechanisms';
import { executorStatus, setUpExecutor } from '@facilitator/evm-executor';
import type { DevnetAccount } from '@facilitator/evm-devnet';
import { startTestStack, type TestStack } from '../support/test-stack';
import { until as waitUntil } from '../support/until';
import type { WorkerProcess } from '../support/worker-process';
import { checkLedger, ledgerStart, startSettlement, summarizeWarnings, verifyMany } from './flows';
import { ScenarioReport } from './scenario-report';

const ATOMIC = { SETTLEMENT_MODE: 'atomic', BATCH_WINDOW_MS: '300', EXECUTOR_RECHECK_MS: '1000' };
const BURST = 5;
const report = new ScenarioReport(
  '12-relayer-rotation',
  'Relayer keys rotated while settlements run',
  'atomic settlements arrive in bursts of 5 every 0.4 s while a relayer key is added (new workers, then `executor setup` for three keys) and another retired (new workers without it, then `executor setup` for two); old workers stopped with SIGTERM; 1 s blocks, no treasury key in any worker',
);

let stack: TestStack;
let r1: DevnetAccount, r2: DevnetAccount, r3: DevnetAccount;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  stack = await startTestStack({ devnet: { blockTime: 1, relayerCount: 3, payerBalance: 10n ** 9n } });
  [r1, r2, r3] = stack.devnet.accounts.relayers;
  await setUpFor([r1, r2]);
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  report.save();
});

/**
 * What an operator runs for a new relayer set: `executor setup` (a new executor, the treasury's delegation
 * to it), paid by the treasury, as the CLI does given RELAYER_ADDRESSES: a relayer key the workers use
 * would take a nonce outside their nonce table (docs/custody.md, "Rotating relayer keys").
 */
async function setUpFor(relayers: DevnetAccount[]): Promise<void> {
  const { devnet, config } = stack;
  const status = await setUpExecutor(
    devnet.provider,
    {
      chainId: devnet.chainId,
      token: devnet.token,
      targets: executorTargets({ chainId: devnet.chainId, tokenAddress: devnet.token.toLowerCase() }),
      treasury: devnet.accounts.treasury.address,
      fee: config.feeAmount,
      relayers: relayers.map((r) => r.address),
    },
    { treasuryKey: devnet.accounts.treasury.privateKey, senderKey: devnet.accounts.treasury.privateKey },
  );
  if (status.state !== 'ready') throw new Error(`executor not set up: ${status.why}`);
}

async function startWorkerWith(relayers: DevnetAccount[]): Promise<WorkerProcess> {
  const worker = await stack.startWorker({ ...ATOMIC, RELAYER_PRIVATE_KEYS: relayers.map((r) => r.privateKey).join(',') }, { treasuryKey: false });
  workers.push(worker);
  return worker;
}

/** Settle transactions mined (and successful) from `relayer` whose row was created after `since`. */
async function minedFrom(relayer: DevnetAccount, since: Date): Promise<number> {
  return stack.db.prisma.chainTransaction.count({ where: { purpose: 'settle', fromAddress: relayer.address.toLowerCase(), status: 'confirmed', createdAt: { gt: since } } });
}

/** Polls until `done`; a timeout names what was awaited, the open settlements and the workers' warnings. */
function until(what: string, done: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  return waitUntil(what, done, timeoutMs, async () => `open settlements: ${await openSettlements()}; workers said: ${workers.map((w) => summarizeWarnings(w.lines)).join(' | ')}`);
}

async function openSettlements(): Promise<string> {
  const open = await stack.db.prisma.settlement.findMany({ where: { state: { notIn: ['settled', 'failed'] } }, select: { id: true, state: true, waitingReason: true, settlementMode: true } });
  return JSON.stringify(open.slice(0, 5)) + ` (${open.length} in all)`;
}

it('adds and retires a relayer key under load: every settlement settled once, no batch reverted, no wait', async () => {
  const verificationIds = await verifyMany(stack, 200);
  const ledger = await ledgerStart(stack);
  const load = new SettlementLoad(verificationIds);
  let retired: Date;
  let added: Date;
  try {
    const first = await startWorkerWith([r1, r2]);
    await load.untilSettled(BURST, 'settlements through the first workers');

    // 1. add r3: workers that hold it start first (the executor does not name it yet: they batch with r1 and
    //    r2), then `executor setup` for three keys; the old workers go
    const second = await startWorkerWith([r1, r2, r3]);
    await setUpFor([r1, r2, r3]);
    added = new Date();
    await until('a batch sent by the added key', async () => (await minedFrom(r3, added)) > 0);
    await first.stop('SIGTERM');

    // 2. retire r1: workers without it start first, the ones holding it stop, then `executor setup` for two keys
    await startWorkerWith([r2, r3]);
    await second.stop('SIGTERM');
    retired = new Date();
    await setUpFor([r2, r3]);
    await load.untilSettled((await load.settled()) + 2 * BURST, 'settlements through the executor of two keys');
  } finally {
    // one more burst, settled by the executor of two keys only; a failed step stops the load at once
    await load.stop();
  }
  const { settlementIds, offered } = load;

  await until('every settlement final', async () => (await stack.db.prisma.settlement.count({ where: { id: { in: settlementIds }, state: { notIn: ['settled', 'failed'] } } })) === 0, 120_000);
  const settle = await stack.db.prisma.chainTransaction.findMany({ where: { purpose: 'settle' }, select: { status: true } });
  // a worker that found the executor not ready for its keys says so, and its settlements wait
  const waited = workers.flatMap((w) => w.lines).filter((l) => l.includes('settlements wait for it')).length;
  const warned = (w: WorkerProcess) => w.lines.filter((l) => l.includes('name different relayer keys')).length;
  const final = await executorStatus(stack.devnet.provider, {
    chainId: stack.devnet.chainId,
    token: stack.devnet.token,
    targets: executorTargets({ chainId: stack.devnet.chainId, tokenAddress: stack.devnet.token.toLowerCase() }),
    treasury: stack.devnet.accounts.treasury.address,
    fee: stack.config.feeAmount,
    relayers: [r2.address, r3.address],
  });
  const fromAdded = await minedFrom(r3, added!);
  const fromRetired = await stack.db.prisma.chainTransaction.count({ where: { purpose: 'settle', fromAddress: r1.address.toLowerCase(), createdAt: { gt: retired! } } });
  report.note(`${settlementIds.length} settlements in ${settle.length} settle transactions; warnings "the executor and this worker name different relayer keys" per worker (the rotation's middle steps): ${workers.map(warned).join(', ')}`);

  expect(report.assert('settlements offered during the rotation', 'at least 20', settlementIds.length, settlementIds.length >= 20)).toBe(true);
  expect(report.check('settle transactions that reverted on chain', 0, settle.filter((t) => t.status === 'reverted').length)).toBe(true);
  expect(report.check('times a worker found the atomic path not ready (its settlements would wait)', 0, waited)).toBe(true);
  expect(report.assert('batches mined from the added key', 'at least 1', fromAdded, fromAdded > 0)).toBe(true);
  expect(report.check('batches from the retired key created after its workers stopped', 0, fromRetired)).toBe(true);
  expect(report.check('the executor at the end names exactly the two remaining keys', 'ready', final.state)).toBe(true);
  expect(await checkLedger(report, stack, { settlementIds, verificationIds: offered, ...ledger, atomic: true })).toBe(true);
}, 300_000);

/** Bursts of settlements every 0.4 s until stopped, then one more burst. */
class SettlementLoad {
  readonly settlementIds: string[] = [];
  readonly offered: string[] = [];
  private running = true;
  private failed = false;
  private readonly done: Promise<void>;

  constructor(private readonly verificationIds: string[]) {
    this.done = this.run().catch((error) => {
      this.failed = true;
      throw error;
    });
    // awaited in stop(); a failure meanwhile is reported there, not as an unhandled rejection
    this.done.catch(() => undefined);
  }

  settled(): Promise<number> {
    return stack.db.prisma.settlement.count({ where: { id: { in: [...this.settlementIds] }, state: 'settled' } });
  }

  async untilSettled(count: number, what: string): Promise<void> {
    await until(what, async () => {
      if (this.failed) await this.done;
      return (await this.settled()) >= count;
    });
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }

  private async run(): Promise<void> {
    for (let last = false; !last && this.offered.length + BURST <= this.verificationIds.length; ) {
      last = !this.running;
      const burst = this.verificationIds.slice(this.offered.length, this.offered.length + BURST);
      this.offered.push(...burst);
      this.settlementIds.push(...(await Promise.all(burst.map((id) => startSettlement(stack, id)))));
      if (!last) await sleep(400);
    }
  }
}
