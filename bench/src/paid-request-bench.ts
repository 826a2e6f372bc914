// `npm run bench:paid`: the latency of a paid HTTP request through the real x402 middleware and client,
// with three facilitators side by side against one anvil with 1 s blocks:
// - ours, atomic: the treasury delegates (EIP-7702) to the settlement executor; fee and transfer are one
//   `settle` transaction sent by a relayer (SETTLEMENT_MODE=atomic, the default);
// - ours, sequential: fee `transferFrom` then the payer's `transferWithAuthorization`, two transactions
//   (SETTLEMENT_MODE=sequential);
// - the reference: @x402/core's x402Facilitator with @x402/evm's exact scheme on a viem wallet client, no
//   fee (reference-facilitator.ts).
// Each has an Express app of its own protected by @x402/express's `paymentMiddleware` (an
// x402ResourceServer with HTTPFacilitatorClient pointed at that facilitator and @x402/evm's exact server
// scheme), paid by @x402/fetch's `wrapFetchWithPayment` with the devnet payer's key. A request is timed
// from the client's call to the resource's body read after the 200 (402, signing, retry with payment,
// /verify, handler, /settle — which waits for the chain — and the response).
//
// Sequential phase: each facilitator gets one request at a time, the three at once (one in flight per
// facilitator), each request after a random pause of 0–1 s so that requests meet the block timer at every
// phase (back-to-back requests would all start just after a block). Concurrent phase: one facilitator at a
// time, BENCH_PAID_CONCURRENCY requests in flight. Permit2 phases, as the sequential phase, the three at once,
// through merchant apps of their own: `exact` through Permit2 (BENCH_PAID_PERMIT2_REQUESTS), then `upto`
// through Permit2 (BENCH_PAID_UPTO_REQUESTS; the merchant settles 60 % of the signed maximum with
// @x402/express's `setSettlementOverrides`), ours on both paths and the reference's. For ours the request →
// `settled` latency is read from settlement_transitions afterwards (same machine clock), matched to each
// request by the payment's nonce. Gas per paid request comes from the receipts of each phase's transactions.
import type { Server } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { MaxUint256, Wallet } from 'ethers';
import { setUpDevnetExecutor, type Devnet } from '@facilitator/evm-devnet';
import { PERMIT2_ADDRESS } from '@facilitator/payment-mechanisms';
import type { x402Client } from '@x402/fetch';
import {
  describeProblems,
  FEE_UNITS,
  startChain,
  startFacilitator,
  stopChainOnSignal,
  type Facilitator,
} from './facilitator-stack';
import type { LogProblems } from './app-logs';
import { machineInfo, versions, type MachineInfo } from './machine';
import { startCpuMeter, waitForQuietMachine, type CpuUsage } from './proc';
import { startReferenceFacilitator, type ReferenceFacilitator } from './reference-facilitator';
import { envNumber, log, runBenchmarkMain, table } from './results';
import { epochMs, round, roundSummary, summarize, type LatencySummary } from './stats';
import { buyerOf, listen, merchantApp, merchantSettleKey, paidRequest, PAID_PRICE_UNITS, uptoSettledUnits, type PaidSample as Sample } from './x402-buyer';

export const PAID_TARGETS = { requestToSettledSlackMs: 300 };

export type PaidTargetName =
  | 'atomic'
  | 'sequential'
  | 'reference'
  | 'permit2-atomic'
  | 'permit2'
  | 'reference-permit2'
  | 'upto-atomic'
  | 'upto-sequential'
  | 'reference-upto';
const TARGET_LABELS: Record<PaidTargetName, string> = {
  atomic: 'ours, atomic (one transaction)',
  sequential: 'ours, sequential (two transactions)',
  reference: '@x402/evm exact reference (no fee)',
  'permit2-atomic': 'ours, exact through Permit2, atomic (fee + the proxy in one transaction)',
  permit2: 'ours, exact through Permit2, sequential (fee, then the proxy)',
  'reference-permit2': '@x402/evm exact reference through Permit2 (no fee)',
  'upto-atomic': 'ours, upto through Permit2, atomic (fee + the proxy in one transaction)',
  'upto-sequential': 'ours, upto through Permit2, sequential (fee, then the proxy)',
  'reference-upto': '@x402/evm upto reference through Permit2 (no fee)',
};

export interface PaidTargetResult {
  target: PaidTargetName;
  label: string;
  requests: number;
  /** answered 200 with the resource */
  paid: number;
  failed: number;
  firstError?: string;
  /** client call → resource body, paid requests only */
  latencyMs: LatencySummary;
  /** paid requests per second over the phase (the concurrent phase) */
  perSecond?: number;
  /** ours: request (client start) → the worker's `settled` row */
  requestToSettledMs?: LatencySummary;
  /** ours: median time from `settled` to the client holding the resource (waiter poll, middleware, HTTP) */
  settledToResponseMsP50?: number;
  /** ours: what became of the settlements of this phase's requests */
  settlements?: { settled: number; failed: number; other: number; notFound: number; failureCodes: Record<string, number> };
  /** ours, atomic: mean items per settle transaction over this phase */
  meanBatchSize?: number;
  /**
   * ours: median ms from the request (client start) to the settlement row's creation (`created`) and to
   * the first entry of each state the worker records, for where the time goes
   */
  stagesMsP50?: Record<string, number>;
  /**
   * gas used on chain per paid request (ours: its fee and payment transactions, or its share of the executor's
   * `settle` transaction: gasUsed ÷ the items it carried; the reference: its one), by transaction purpose
   */
  gasPerPayment?: { total: number; byPurpose: Record<string, number> };
}

export interface PaidPhase {
  load: string;
  targets: PaidTargetResult[];
  /** ours ÷ the phase's reference for p50, p95 and mean of the paid-request latency */
  ratios: Partial<Record<PaidTargetName, { p50: number; p95: number; mean: number }>>;
  cpu: CpuUsage;
}

export interface PaidResults {
  benchmark: 'paid-request';
  startedAt: string;
  machine: MachineInfo;
  versions: Record<string, string>;
  /** the share of the machine's CPU busy with other work just before the run (after waiting up to 90 s for quiet) */
  busyBeforeStart?: number;
  /** BENCH_MACHINE_NOTE: what the person running it says about the machine (another engineer's tests, say) */
  machineNote?: string;
  settings: {
    blockTimeSeconds: number;
    sequentialRequests: number;
    jitterMs: number;
    warmupRequests: number;
    concurrency: number;
    concurrentRequests: number;
    /** paid requests per facilitator in the Permit2 phase (0: no Permit2 phase) */
    permit2Requests: number;
    /** paid requests per facilitator in the upto phase (0: no upto phase) */
    uptoRequests?: number;
    /** upto: the amount the merchant settles of the signed maximum (priceUnits) */
    uptoSettledUnits?: string;
    priceUnits: string;
    feeUnits: string;
    apiProcesses: number;
    workerLogLevel: string;
    referencePollingIntervalMs: number;
  };
  sequential: PaidPhase;
  concurrent?: PaidPhase;
  /** `exact` through Permit2: ours (atomic and sequential) and the reference, one at a time each, the three at once */
  permit2?: PaidPhase;
  /** `upto` through Permit2, the merchant settling part of the maximum: ours (atomic and sequential) and the reference */
  upto?: PaidPhase;
  targets: {
    /** ours, atomic, sequential phase: request → settled p50 ≤ 1 block + 0.3 s */
    requestToSettledP50MaxMs: number;
    requestToSettledMet: boolean | null;
  };
  /** warn and error lines each facilitator wrote during the run (every phase's: the Permit2 and upto phases run on the same three) */
  problems: Record<'atomic' | 'sequential' | 'reference', LogProblems>;
}

interface Target {
  name: PaidTargetName;
  merchantUrl: string;
  ours?: Facilitator;
}

export type SettlementsOfRequests = Pick<PaidTargetResult, 'requestToSettledMs' | 'settledToResponseMsP50' | 'settlements' | 'meanBatchSize' | 'stagesMsP50'>;

/** Settlement outcomes of our facilitator for the payments of `samples`, by nonce. */
export async function settlementsOfRequests(ours: Facilitator, samples: Sample[]): Promise<SettlementsOfRequests> {
  const db = ours.db;
  const nonces = samples.filter((s) => s.nonce).map((s) => s.nonce!);
  const { rows } = await db.query<{ id: string; nonce: string; state: string; error_code: string | null; created_ms: string; settled_ms: string | null }>(
    `SELECT s.id, lower(s.nonce) AS nonce, s.state, s.error_code, extract(epoch FROM s.created_at) * 1000 AS created_ms,
            (SELECT extract(epoch FROM min(t.at)) * 1000 FROM settlement_transitions t WHERE t.settlement_id = s.id AND t.to_state = 'settled') AS settled_ms
       FROM settlements s WHERE lower(s.nonce) = ANY($1)`,
    [nonces],
  );
  const byNonce = new Map(rows.map((r) => [r.nonce, r]));
  const transitions = await db.query<{ settlement_id: string; to_state: string; at_ms: string }>(
    `SELECT settlement_id, to_state::text AS to_state, extract(epoch FROM min(at)) * 1000 AS at_ms
       FROM settlement_transitions WHERE settlement_id = ANY($1) GROUP BY settlement_id, to_state`,
    [rows.map((r) => r.id)],
  );
  const stateTimes = new Map<string, Record<string, number>>();
  for (const t of transitions.rows) stateTimes.set(t.settlement_id, { ...stateTimes.get(t.settlement_id), [t.to_state]: Number(t.at_ms) });
  const stages: Record<string, number[]> = {};
  const toSettled: number[] = [];
  const settledToResponse: number[] = [];
  const settlements = { settled: 0, failed: 0, other: 0, notFound: 0, failureCodes: {} as Record<string, number> };
  for (const sample of samples) {
    const row = sample.nonce ? byNonce.get(sample.nonce) : undefined;
    if (!row) {
      settlements.notFound++;
      continue;
    }
    const offsets: Record<string, number> = { created: Number(row.created_ms), ...stateTimes.get(row.id) };
    for (const [state, at] of Object.entries(offsets)) (stages[state] ??= []).push(at - sample.startedAt);
    if (row.state === 'settled') settlements.settled++;
    else if (row.state === 'failed') {
      settlements.failed++;
      settlements.failureCodes[row.error_code ?? 'unknown'] = (settlements.failureCodes[row.error_code ?? 'unknown'] ?? 0) + 1;
    } else settlements.other++;
    if (row.settled_ms !== null) {
      toSettled.push(Number(row.settled_ms) - sample.startedAt);
      if (sample.ok) settledToResponse.push(sample.endedAt - Number(row.settled_ms));
    }
  }
  const result: SettlementsOfRequests = {
    requestToSettledMs: roundSummary(summarize(toSettled), 0),
    settledToResponseMsP50: round(summarize(settledToResponse).p50, 0),
    settlements,
    stagesMsP50: Object.fromEntries(
      ['created', 'check_allowance', 'collect_fee', 'fee_collected', 'executing', 'settled']
        .filter((state) => stages[state]?.length)
        .map((state) => [state, round(summarize(stages[state]).p50, 0)]),
    ),
  };
  if (ours.mode === 'atomic') {
    const { batches, meanBatchSize } = await batchesOf(db, rows.map((r) => r.id));
    if (batches > 0) result.meanBatchSize = meanBatchSize;
  }
  return result;
}

/** How many executor batches (settle transactions) held these settlements, and their mean size (0 without any). */
export async function batchesOf(db: Facilitator['db'], settlementIds: string[]): Promise<{ batches: number; meanBatchSize: number }> {
  const { rows } = await db.query<{ batches: string; items: string }>(
    `SELECT count(DISTINCT i.batch_id) AS batches, count(*) AS items FROM settlement_batch_items i WHERE i.settlement_id = ANY($1)`,
    [settlementIds],
  );
  const batches = Number(rows[0].batches);
  return { batches, meanBatchSize: batches > 0 ? round(Number(rows[0].items) / batches, 2) : 0 };
}

async function summarizeTarget(target: Target, samples: Sample[], phaseSeconds?: number): Promise<PaidTargetResult> {
  const paid = samples.filter((s) => s.ok);
  const failures = samples.filter((s) => !s.ok);
  return {
    target: target.name,
    label: TARGET_LABELS[target.name],
    requests: samples.length,
    paid: paid.length,
    failed: failures.length,
    ...(failures[0] ? { firstError: failures[0].error } : {}),
    latencyMs: roundSummary(summarize(paid.map((s) => s.endedAt - s.startedAt)), 0),
    ...(phaseSeconds ? { perSecond: round(paid.length / phaseSeconds, 2) } : {}),
    ...(target.ours ? await settlementsOfRequests(target.ours, samples) : {}),
  };
}

/** Whether a target is one of the reference facilitator's (the phase's 1.00). */
export const isReference = (target: PaidTargetName) => target.startsWith('reference');

function ratiosOf(results: PaidTargetResult[]): PaidPhase['ratios'] {
  const reference = results.find((r) => isReference(r.target));
  const ratios: PaidPhase['ratios'] = {};
  if (!reference || reference.paid === 0) return ratios;
  for (const r of results) {
    if (isReference(r.target) || r.paid === 0) continue;
    ratios[r.target] = {
      p50: round(r.latencyMs.p50 / reference.latencyMs.p50, 2),
      p95: round(r.latencyMs.p95 / reference.latencyMs.p95, 2),
      mean: round(r.latencyMs.mean / reference.latencyMs.mean, 2),
    };
  }
  return ratios;
}

/**
 * Gas per paid request on chain: for ours, every mined transaction of its settlements (fee and payment) and
 * its share of every executor `settle` transaction that carried it (gasUsed ÷ the items of that batch), for
 * the reference its settle transaction; by purpose, averaged over the paid requests. Every figure is a
 * receipt's gasUsed.
 */
export async function gasPerPayment(devnet: Devnet, target: { ours?: Facilitator }, samples: Sample[]): Promise<PaidTargetResult['gasPerPayment']> {
  const paid = samples.filter((s) => s.ok);
  if (paid.length === 0) return undefined;
  // a transaction hash, its purpose, and the share of its gas this target's payments own
  let hashes: Array<{ purpose: string; hash: string; share: number }>;
  if (target.ours) {
    const db = target.ours.db;
    const nonces = paid.filter((s) => s.nonce).map((s) => s.nonce!);
    const own = await db.query<{ purpose: string; mined_hash: string }>(
      `SELECT t.purpose::text AS purpose, t.mined_hash FROM chain_transactions t JOIN settlements s ON s.id = t.settlement_id
        WHERE lower(s.nonce) = ANY($1) AND t.mined_hash IS NOT NULL`,
      [nonces],
    );
    const batched = await db.query<{ purpose: string; mined_hash: string; items_here: string; item_count: number }>(
      `SELECT t.purpose::text AS purpose, t.mined_hash, count(*) AS items_here, b.item_count
         FROM settlements s JOIN settlement_batch_items i ON i.settlement_id = s.id JOIN settlement_batches b ON b.id = i.batch_id
         JOIN chain_transactions t ON t.settlement_id = b.id
        WHERE lower(s.nonce) = ANY($1) AND t.mined_hash IS NOT NULL
        GROUP BY t.purpose, t.mined_hash, b.item_count`,
      [nonces],
    );
    hashes = [
      ...own.rows.map((r) => ({ purpose: r.purpose, hash: r.mined_hash, share: 1 })),
      ...batched.rows.map((r) => ({ purpose: r.purpose, hash: r.mined_hash, share: Number(r.items_here) / r.item_count })),
    ];
  } else {
    hashes = paid.filter((s) => s.transaction).map((s) => ({ purpose: 'settle', hash: s.transaction!, share: 1 }));
  }
  const byPurpose: Record<string, number> = {};
  for (const { purpose, hash, share } of hashes) {
    const receipt = await devnet.provider.getTransactionReceipt(hash);
    if (receipt) byPurpose[purpose] = (byPurpose[purpose] ?? 0) + Number(receipt.gasUsed) * share;
  }
  for (const purpose of Object.keys(byPurpose)) byPurpose[purpose] = Math.round(byPurpose[purpose] / paid.length);
  return { total: Object.values(byPurpose).reduce((a, b) => a + b, 0), byPurpose };
}

async function runSequentialPhase(devnet: Devnet, targets: Target[], buyer: x402Client, count: number, jitterMs: number, trees: Record<string, number>): Promise<PaidPhase> {
  const cpu = startCpuMeter({ trees });
  const all = await Promise.all(
    targets.map(async (target) => {
      const samples: Sample[] = [];
      for (let i = 0; i < count; i++) {
        await sleep(Math.random() * jitterMs);
        samples.push(await paidRequest(`${target.merchantUrl}/resource`, buyer));
      }
      return samples;
    }),
  );
  const cpuUsage = cpu.stop();
  const results = await Promise.all(targets.map(async (t, i) => ({ ...(await summarizeTarget(t, all[i])), gasPerPayment: await gasPerPayment(devnet, t, all[i]) })));
  return {
    load: `${count} paid requests per facilitator, one at a time for each, the ${targets.length === 2 ? 'two' : 'three'} facilitators at once; a random 0–${jitterMs} ms pause before each request`,
    targets: results,
    ratios: ratiosOf(results),
    cpu: cpuUsage,
  };
}

async function runConcurrentPhase(targets: Target[], buyer: x402Client, count: number, concurrency: number, trees: Record<string, number>): Promise<PaidPhase> {
  const cpu = startCpuMeter({ trees });
  const results: PaidTargetResult[] = [];
  for (const target of targets) {
    log(`concurrent: ${target.name}, ${count} requests, ${concurrency} in flight`);
    const samples: Sample[] = [];
    let next = 0;
    const started = epochMs();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        await sleep(Math.random() * 1_000); // spread the first requests over a block
        while (next < count) {
          next++;
          samples.push(await paidRequest(`${target.merchantUrl}/resource`, buyer));
        }
      }),
    );
    results.push(await summarizeTarget(target, samples, (epochMs() - started) / 1000));
  }
  return {
    load: `${count} paid requests per facilitator with ${concurrency} in flight (a closed loop), one facilitator after the other`,
    targets: results,
    ratios: ratiosOf(results),
    cpu: cpu.stop(),
  };
}

export async function runPaidBench(): Promise<PaidResults> {
  const settings: PaidResults['settings'] = {
    blockTimeSeconds: 1,
    sequentialRequests: envNumber('BENCH_PAID_REQUESTS', 30),
    jitterMs: envNumber('BENCH_PAID_JITTER_MS', 1_000),
    warmupRequests: envNumber('BENCH_PAID_WARMUP', 3),
    concurrency: envNumber('BENCH_PAID_CONCURRENCY', 5),
    concurrentRequests: process.env.BENCH_PAID_CONCURRENT_REQUESTS === '0' ? 0 : envNumber('BENCH_PAID_CONCURRENT_REQUESTS', 20),
    permit2Requests: process.env.BENCH_PAID_PERMIT2_REQUESTS === '0' ? 0 : envNumber('BENCH_PAID_PERMIT2_REQUESTS', 20),
    uptoRequests: process.env.BENCH_PAID_UPTO_REQUESTS === '0' ? 0 : envNumber('BENCH_PAID_UPTO_REQUESTS', 20),
    uptoSettledUnits: uptoSettledUnits().toString(),
    priceUnits: PAID_PRICE_UNITS.toString(),
    feeUnits: FEE_UNITS.toString(),
    apiProcesses: envNumber('BENCH_API_PROCESSES', 2),
    workerLogLevel: 'info',
    referencePollingIntervalMs: envNumber('BENCH_PAID_REFERENCE_POLLING_MS', 100),
  };
  const perTarget = settings.warmupRequests + settings.sequentialRequests + settings.concurrentRequests;
  const busy = await waitForQuietMachine();
  if (busy > 0.15) log(`machine still ${Math.round(busy * 100)}% busy with other work; measuring anyway`);
  const startedAt = new Date().toISOString();

  const permit2PerTarget = settings.permit2Requests > 0 ? settings.warmupRequests + settings.permit2Requests : 0;
  const uptoPerTarget = settings.uptoRequests! > 0 ? settings.warmupRequests + settings.uptoRequests! : 0;
  const devnet = await startChain({
    blockTime: settings.blockTimeSeconds,
    relayerCount: 3,
    payerSpend: BigInt(3 * (perTarget + permit2PerTarget + uptoPerTarget) + 10) * PAID_PRICE_UNITS,
    fees: 2 * (perTarget + permit2PerTarget + uptoPerTarget) + 10,
  });
  const unregisterChain = stopChainOnSignal(devnet);
  const [atomicKey, sequentialKey, referenceKey] = devnet.accounts.relayers;
  const servers: Server[] = [];
  const stops: Array<() => Promise<void>> = [];
  let problems: PaidResults['problems'] | undefined;
  let ours: { atomic: Facilitator; sequential: Facilitator } | undefined;
  let reference: ReferenceFacilitator | undefined;
  try {
    // the atomic facilitator's relayer is the executor's only one; the other two keys are the sequential
    // facilitator's and the reference's, so no two senders share a nonce
    log('setting up the settlement executor (EIP-7702 delegation of the treasury)');
    await setUpDevnetExecutor(devnet, FEE_UNITS, [atomicKey]);
    log('starting both of our facilitators and the reference');
    const started = await Promise.allSettled([
      startFacilitator(devnet, { relayerKeys: [atomicKey.privateKey], apiProcesses: settings.apiProcesses, workerEnv: { SETTLEMENT_MODE: 'atomic' } }),
      startFacilitator(devnet, { relayerKeys: [sequentialKey.privateKey], apiProcesses: settings.apiProcesses, workerEnv: { SETTLEMENT_MODE: 'sequential' } }),
      startReferenceFacilitator({ rpcUrl: devnet.rpcUrl, privateKey: referenceKey.privateKey, pollingIntervalMs: settings.referencePollingIntervalMs }),
    ] as const);
    for (const s of started) if (s.status === 'fulfilled') stops.push(() => s.value.stop());
    const notStarted = started.find((s) => s.status === 'rejected');
    if (notStarted) throw notStarted.reason;
    const [atomic, sequential, ref] = started.map((s) => (s as PromiseFulfilledResult<unknown>).value) as [Facilitator, Facilitator, ReferenceFacilitator];
    ours = { atomic, sequential };
    reference = ref;

    const targets: Target[] = [
      { name: 'atomic', merchantUrl: await listen(merchantApp(devnet, `${atomic.api.url}/x402`), servers), ours: atomic },
      { name: 'sequential', merchantUrl: await listen(merchantApp(devnet, `${sequential.api.url}/x402`), servers), ours: sequential },
      { name: 'reference', merchantUrl: await listen(merchantApp(devnet, ref.url), servers) },
    ];
    const buyer = buyerOf(devnet);
    const trees: Record<string, number> = {
      'atomic api': atomic.api.child.pid!,
      'atomic worker': atomic.worker.child.pid!,
      'sequential api': sequential.api.child.pid!,
      'sequential worker': sequential.worker.child.pid!,
      reference: ref.pid,
      anvil: devnet.pid,
      bench: process.pid,
    };

    log(`warm-up: ${settings.warmupRequests} paid requests per facilitator (not counted)`);
    await Promise.all(
      targets.map(async (t) => {
        for (let i = 0; i < settings.warmupRequests; i++) {
          const s = await paidRequest(`${t.merchantUrl}/resource`, buyer);
          if (!s.ok) throw new Error(`warm-up request to ${t.name} failed: ${s.error}`);
        }
      }),
    );
    log(`sequential: ${settings.sequentialRequests} paid requests per facilitator`);
    const sequentialPhase = await runSequentialPhase(devnet, targets, buyer, settings.sequentialRequests, settings.jitterMs, trees);
    const concurrentPhase =
      settings.concurrentRequests > 0 ? await runConcurrentPhase(targets, buyer, settings.concurrentRequests, settings.concurrency, trees) : undefined;
    if (settings.permit2Requests > 0 || settings.uptoRequests! > 0) await approvePermit2(devnet);
    const permit2Phase = settings.permit2Requests > 0 ? await runPermit2Phase('permit2', devnet, ours, ref, servers, buyer, settings, trees) : undefined;
    const uptoPhase = settings.uptoRequests! > 0 ? await runPermit2Phase('upto', devnet, ours, ref, servers, buyer, settings, trees) : undefined;
    // a moment for anything the facilitators log after the last answer (a late error)
    await sleep(500);
    problems = { atomic: atomic.problems(), sequential: sequential.problems(), reference: ref.problems() };

    const requestToSettledP50MaxMs = settings.blockTimeSeconds * 1000 + PAID_TARGETS.requestToSettledSlackMs;
    const atomicSequential = sequentialPhase.targets.find((t) => t.target === 'atomic');
    return {
      benchmark: 'paid-request',
      startedAt,
      machine: machineInfo(),
      versions: await versions(),
      busyBeforeStart: busy,
      ...(process.env.BENCH_MACHINE_NOTE ? { machineNote: process.env.BENCH_MACHINE_NOTE } : {}),
      settings,
      sequential: sequentialPhase,
      ...(concurrentPhase ? { concurrent: concurrentPhase } : {}),
      ...(permit2Phase ? { permit2: permit2Phase } : {}),
      ...(uptoPhase ? { upto: uptoPhase } : {}),
      targets: {
        requestToSettledP50MaxMs,
        requestToSettledMet: atomicSequential?.requestToSettledMs?.count ? atomicSequential.requestToSettledMs.p50 <= requestToSettledP50MaxMs : null,
      },
      problems,
    };
  } finally {
    if (!problems && ours && reference) {
      describeProblems('atomic facilitator', ours.atomic.problems());
      describeProblems('sequential facilitator', ours.sequential.problems());
      describeProblems('reference facilitator', reference.problems());
    }
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
    for (const stop of stops) await stop().catch((err: unknown) => log(`stopping: ${(err as Error).message}`));
    await devnet.stop();
    unregisterChain();
  }
}

/** The devnet payer approves Permit2 on the token once, as a Permit2 payer does (or by an EIP-2612 permit). */
async function approvePermit2(devnet: Devnet): Promise<void> {
  log('permit2: the payer approves Permit2 once');
  await devnet.setEthBalance(devnet.accounts.payer.address, 10n ** 17n);
  const payer = new Wallet(devnet.accounts.payer.privateKey, devnet.provider);
  const token = devnet.usdc.connect(payer) as unknown as { approve(spender: string, value: bigint): Promise<{ wait(): Promise<unknown> }> };
  await (await token.approve(PERMIT2_ADDRESS, MaxUint256)).wait();
}

type Permit2Kind = 'permit2' | 'upto';

/**
 * A mechanism through Permit2 on the three facilitators: `exact` (the merchant's requirements carry
 * `extra.assetTransferMethod: "permit2"`) or `upto` (the merchant's upto requirements, PAID_PRICE_UNITS the
 * maximum, and `setSettlementOverrides` settling `uptoSettledUnits()` of it). Ours on the atomic path (the
 * fee and the proxy's `settle` in one executor transaction) and on the sequential path (the fee from the
 * treasury, then the proxy's `settle`), and the reference (the proxy's `settle` alone). One at a time for
 * each, the three at once, after a warm-up; gas per paid request from the receipts.
 */
async function runPermit2Phase(
  kind: Permit2Kind,
  devnet: Devnet,
  ours: { atomic: Facilitator; sequential: Facilitator },
  ref: ReferenceFacilitator,
  servers: Server[],
  buyer: x402Client,
  settings: PaidResults['settings'],
  trees: Record<string, number>,
): Promise<PaidPhase> {
  const options = kind === 'upto' ? { upto: true } : { permit2: true };
  // ours settle part of an upto maximum for the merchant only: it sends its settle key (the reference has none)
  const keyed = async (f: Facilitator) => (kind === 'upto' ? { ...options, settleKey: await merchantSettleKey(devnet, f.api.url) } : options);
  const names: Record<Permit2Kind, [PaidTargetName, PaidTargetName, PaidTargetName]> = {
    permit2: ['permit2-atomic', 'permit2', 'reference-permit2'],
    upto: ['upto-atomic', 'upto-sequential', 'reference-upto'],
  };
  const [atomicName, sequentialName, referenceName] = names[kind];
  const targets: Target[] = [
    { name: atomicName, merchantUrl: await listen(merchantApp(devnet, `${ours.atomic.api.url}/x402`, await keyed(ours.atomic)), servers), ours: ours.atomic },
    { name: sequentialName, merchantUrl: await listen(merchantApp(devnet, `${ours.sequential.api.url}/x402`, await keyed(ours.sequential)), servers), ours: ours.sequential },
    { name: referenceName, merchantUrl: await listen(merchantApp(devnet, ref.url, options), servers) },
  ];
  await Promise.all(
    targets.map(async (t) => {
      for (let i = 0; i < settings.warmupRequests; i++) {
        const s = await paidRequest(`${t.merchantUrl}/resource`, buyer);
        if (!s.ok) throw new Error(`${kind} warm-up request to ${t.name} failed: ${s.error}`);
      }
    }),
  );
  const count = kind === 'upto' ? settings.uptoRequests! : settings.permit2Requests;
  log(`${kind}: ${count} paid requests per facilitator`);
  const cpu = startCpuMeter({ trees });
  const all = await Promise.all(
    targets.map(async (target) => {
      const samples: Sample[] = [];
      for (let i = 0; i < count; i++) {
        await sleep(Math.random() * settings.jitterMs);
        samples.push(await paidRequest(`${target.merchantUrl}/resource`, buyer));
      }
      return samples;
    }),
  );
  const cpuUsage = cpu.stop();
  const results = await Promise.all(targets.map(async (t, i) => ({ ...(await summarizeTarget(t, all[i])), gasPerPayment: await gasPerPayment(devnet, t, all[i]) })));
  const what = kind === 'upto' ? `through upto (a maximum of ${settings.priceUnits} units signed, ${settings.uptoSettledUnits} settled)` : 'through Permit2';
  return {
    load: `${count} paid requests per facilitator ${what}, one at a time for each, the three facilitators at once; a random 0–${settings.jitterMs} ms pause before each request`,
    targets: results,
    ratios: ratiosOf(results),
    cpu: cpuUsage,
  };
}

export function printPaid(r: PaidResults): void {
  const rows: Array<Array<string | number>> = [['phase', 'facilitator', 'paid', 'failed', 'p50 ms', 'p95 ms', 'mean ms', 'paid/s', '→settled p50', '→settled p95', 'batch size']];
  for (const [name, phase] of [['sequential', r.sequential], ['concurrent', r.concurrent], ['permit2', r.permit2], ['upto', r.upto]] as const) {
    if (!phase) continue;
    for (const t of phase.targets) {
      rows.push([name, t.label, t.paid, t.failed, t.latencyMs.p50, t.latencyMs.p95, t.latencyMs.mean, t.perSecond ?? '', t.requestToSettledMs?.p50 ?? '', t.requestToSettledMs?.p95 ?? '', t.meanBatchSize ?? '']);
    }
  }
  process.stdout.write(`\npaid requests through @x402/express + @x402/fetch, 1 s blocks — ${r.machine.cpuModel}, ${r.machine.cores} cores\n${table(rows)}\n`);
  for (const [name, phase] of [['sequential', r.sequential], ['concurrent', r.concurrent], ['permit2', r.permit2], ['upto', r.upto]] as const) {
    if (phase) process.stdout.write(`${name}: ours ÷ reference ${JSON.stringify(phase.ratios)}\n`);
    for (const t of phase?.targets ?? []) if (t.gasPerPayment) process.stdout.write(`${name} ${t.target}: gas per paid request ${JSON.stringify(t.gasPerPayment)}\n`);
    for (const t of phase?.targets ?? []) if (t.firstError) process.stdout.write(`${name} ${t.target}: first failure ${t.firstError}\n`);
  }
  for (const [name, phase] of [['sequential', r.sequential], ['concurrent', r.concurrent]] as const) {
    for (const t of phase?.targets ?? []) if (t.stagesMsP50) process.stdout.write(`${name} ${t.target}: median ms from the request to each state ${JSON.stringify(t.stagesMsP50)}; settled → 200 p50 ${t.settledToResponseMsP50} ms\n`);
  }
  const met = r.targets.requestToSettledMet;
  process.stdout.write(`atomic request → settled p50 ≤ ${r.targets.requestToSettledP50MaxMs} ms: ${met === null ? 'not measured' : met ? 'met' : 'MISSED'}\n`);
  for (const [name, p] of Object.entries(r.problems)) {
    if (p.errors + p.warnings > 0) process.stdout.write(`${name}: ${p.errors} error / ${p.warnings} warning lines: ${p.messages.map((m) => `${m.level} ×${m.count} ${m.message}`).join('; ')}\n`);
  }
}

if (require.main === module) runBenchmarkMain('paid-request', runPaidBench, printPaid);
