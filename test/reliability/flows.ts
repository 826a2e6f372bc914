// Money flows shared by the reliability scenarios, and the ledger checks each of them ends with.
import { transfersOnChain } from '../support/chain-actions';
import type { TestStack } from '../support/test-stack';
import { PRICE_UNITS } from '../support/test-stack';
import type { ScenarioReport } from './scenario-report';
import { setTimeout as sleep } from 'node:timers/promises';

export const FEE = 10_000n;

export async function verifyMany(stack: TestStack, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await stack.http.post('/v1/verify').send((await stack.payment()).formB());
    if (res.status !== 200) throw new Error(`verify failed: ${res.status} ${JSON.stringify(res.body)}`);
    ids.push(res.body.verification_id);
  }
  return ids;
}

/** Form B settle: answers pending at once. Retries on 503 (a dependency may be down on purpose). */
export async function startSettlement(stack: TestStack, verificationId: string): Promise<string> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const res = await stack.http
      .post('/v1/settle')
      .send({ verification_id: verificationId, destination_address: stack.devnet.accounts.merchant.address });
    if (res.status === 200) return res.body.settlement_id;
    if (res.status !== 503) throw new Error(`settle answered ${res.status}: ${JSON.stringify(res.body)}`);
    await sleep(250);
  }
  throw new Error('settle never accepted');
}

export async function waitAllFinal(stack: TestStack, ids: string[], timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let open = ids.length;
    try {
      open = await stack.db.prisma.settlement.count({ where: { id: { in: ids }, state: { notIn: ['settled', 'failed'] } } });
    } catch {
      // the database may be the thing that is down
    }
    if (open === 0 || Date.now() > deadline) return open;
    await sleep(250);
  }
}

/**
 * The checks every scenario ends with: all settlements recorded and final (settled), exactly one fee
 * and one transfer each on chain, balances moved by exactly that, one transaction of each kind stored.
 */
export async function checkLedger(
  report: ScenarioReport,
  stack: TestStack,
  args: {
    settlementIds: string[];
    verificationIds: string[];
    startBlock: number;
    before: { payer: bigint; merchant: bigint; treasury: bigint };
    /**
     * the atomic path: one batch item per settlement and one settle transaction per batch, instead of a fee
     * and a transfer each (default: what the settlements' rows say, which must be one path for all)
     */
    atomic?: boolean;
  },
): Promise<boolean> {
  const { merchant, payer, treasury } = stack.devnet.accounts;
  const n = args.settlementIds.length;
  const rows = await stack.db.prisma.settlement.findMany({ where: { id: { in: args.settlementIds } } });
  const atomic = args.atomic ?? rows.some((r) => r.settlementMode === 'atomic');
  // the stack's workers hold no treasury key on the atomic path unless a scenario gives it one (test-stack)
  report.note(atomic ? 'path: atomic (fee and transfer in one executor transaction per batch), workers without the treasury key' : 'path: sequential (a fee and a transfer transaction each), workers with the treasury key');
  const verifications = await stack.db.prisma.verification.count({ where: { id: { in: args.verificationIds } } });
  const settled = rows.filter((r) => r.state === 'settled').length;
  const fees = await transfersOnChain(stack.devnet, args.startBlock, merchant.address, treasury.address);
  const payments = await transfersOnChain(stack.devnet, args.startBlock, payer.address, merchant.address);
  const txRows = await stack.db.prisma.chainTransaction.count({ where: { settlementId: { in: args.settlementIds } } });
  const items = await stack.db.prisma.settlementBatchItem.findMany({ where: { settlementId: { in: args.settlementIds } }, select: { batchId: true } });
  const batchIds = [...new Set(items.map((i) => i.batchId))];
  const settleTxs = await stack.db.prisma.chainTransaction.count({ where: { settlementId: { in: batchIds }, purpose: 'settle' } });
  const [p, m, t] = await Promise.all([payer, merchant, treasury].map((a) => stack.devnet.balanceOf(a.address)));
  const results = [
    report.check('verification records kept', args.verificationIds.length, verifications),
    report.check('settlement records kept', n, rows.length),
    report.check('settlements in a final state, settled', n, settled),
    report.check('fee transfers on chain (merchant → treasury)', n, fees),
    report.check('payment transfers on chain (payer → merchant)', n, payments),
    ...(atomic
      ? [
          report.check('batch items stored (one per settlement)', n, items.length),
          report.check('settle transactions stored (one per batch)', batchIds.length, settleTxs),
        ]
      : [report.check('transactions stored (one fee + one transfer each)', 2 * n, txRows)]),
    report.check('payer balance change', (-BigInt(n) * PRICE_UNITS).toString(), (p - args.before.payer).toString()),
    report.check('merchant balance change', (BigInt(n) * (PRICE_UNITS - FEE)).toString(), (m - args.before.merchant).toString()),
    report.check('treasury balance change', (BigInt(n) * FEE).toString(), (t - args.before.treasury).toString()),
  ];
  return results.every(Boolean);
}

export async function ledgerStart(stack: TestStack) {
  const { merchant, payer, treasury } = stack.devnet.accounts;
  const [p, m, t] = await Promise.all([payer, merchant, treasury].map((a) => stack.devnet.balanceOf(a.address)));
  return { startBlock: await stack.devnet.provider.getBlockNumber(), before: { payer: p, merchant: m, treasury: t } };
}

/** "warn: settlement step failed; will retry ×12, …" from a process's JSON log lines at warn level and above */
export function summarizeWarnings(lines: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const line of lines) {
    try {
      const entry = JSON.parse(line) as { level?: string; message?: string };
      if (entry.level === 'warn' || entry.level === 'error') counts.set(`${entry.level}: ${entry.message}`, (counts.get(`${entry.level}: ${entry.message}`) ?? 0) + 1);
    } catch {
      // not a log line
    }
  }
  return [...counts].map(([m, n]) => `${m} ×${n}`).join('; ') || 'none';
}
