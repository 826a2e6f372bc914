// Settlement load shared by bench:settle, bench:mixed and bench:settle-curve: payments verified first (not
// timed), Form B settle requests offered by autocannon, and what became of each one read from Postgres.
//
// Latency is measured without polling the API: the request time is taken client-side just before the
// settle request is written (autocannon's setupRequest), and the `settled` time is the worker's own
// transition row in Postgres (settlement_transitions.at, same machine clock), read once the load is over.
import type { Client } from 'pg';
import type { Devnet } from '@facilitator/evm-devnet';
import { loadRun, loadRunAtRate, type LoadRunResult, type RequestContext } from './autocannon-run';
import type { PaymentFactory } from './payments';
import { epochMs, round, roundSummary, summarize, type LatencySummary } from './stats';
import { setTimeout as sleep } from 'node:timers/promises';

export interface SettleRequest {
  verificationId: string;
  settlementId?: string;
  /** epoch ms, just before the settle request was written */
  requestedAt: number;
  status?: number;
}

export interface SettleOutcome {
  requested: number;
  settled: number;
  failed: number;
  unfinished: number;
  /** settle requests not answered 200 */
  rejected: number;
  /**
   * settled per second: for a burst, from the first settle request to the last `settled`; for a
   * rate-limited offer, over the offer's window or, when the worker fell behind, the time it took to drain
   */
  perSecond: number;
  latencyMs: LatencySummary;
  /** median time spent in each part, ms: waiting for the worker, fee transfer, payer transfer */
  medianStagesMs: { toPickup: number; checkAllowance: number; feeTransfer: number; submitTransfer: number; transferConfirmed: number };
  failureCodes: Record<string, number>;
}

const post = async (url: string, body: unknown) => {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

/** Verifies `count` fresh payments through the API (setup, not timed) and returns their verification ids. */
export async function verifyPayments(apiUrl: string, factory: PaymentFactory, count: number): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next++;
      const { status, body } = await post(`${apiUrl}/v1/verify`, factory.formA(factory.make()));
      const id = (body.details as { verification_id?: string } | undefined)?.verification_id;
      if (status !== 200 || !id) throw new Error(`verify answered ${status}: ${JSON.stringify(body)}`);
      ids.push(id);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  return ids;
}

/** A rate (whole requests per second, an open loop), or a number of requests in flight (a closed loop). */
export type OfferOptions = { ratePerSecond: number } | { connections: number };

/**
 * Sends one Form B settle request per entry of `requests` with autocannon, filling in each one's
 * requestedAt, answer status and settlement id. With a rate it is an open loop (autocannon's overallRate,
 * spread over each second by loadRunAtRate: requests leave on schedule whatever the answers), as
 * independent merchants would send them; with connections, a closed loop, the most the API will take.
 */
export function offerSettles(apiUrl: string, devnet: Devnet, requests: SettleRequest[], options: OfferOptions): Promise<LoadRunResult> {
  let next = 0;
  const destination = devnet.accounts.merchant.address;
  const load = {
    url: apiUrl,
    path: '/v1/settle',
    amount: requests.length,
    nextBody(context: RequestContext) {
      // `amount` bounds the requests to requests.length; the fallback (a 404) would show as rejected
      const request = requests[next++] ?? { verificationId: 'ver_none', requestedAt: 0 };
      request.requestedAt = epochMs();
      context.request = request;
      return JSON.stringify({ verification_id: request.verificationId, destination_address: destination });
    },
    onAnswer(status: number, body: string, context: RequestContext) {
      const request = context.request as SettleRequest;
      request.status = status;
      if (status === 200) request.settlementId = (JSON.parse(body) as { settlement_id: string }).settlement_id;
    },
  };
  return 'ratePerSecond' in options
    ? loadRunAtRate({ ...load, ratePerSecond: options.ratePerSecond })
    : // autocannon needs at least one request per connection
      loadRun({ ...load, connections: Math.max(1, Math.min(options.connections, requests.length)) });
}

/** Waits until every settlement is final, or gives up after `timeoutMs` (reported as unfinished). */
export async function waitForFinal(db: Client, ids: string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const { rows } = await db.query<{ open: string }>(
      "SELECT count(*) AS open FROM settlements WHERE id = ANY($1) AND state NOT IN ('settled', 'failed')",
      [ids],
    );
    if (Number(rows[0].open) === 0) return;
    await sleep(200);
  }
}

interface Timeline {
  state: string;
  errorCode: string | null;
  /** first time each state was entered, epoch ms */
  at: Record<string, number>;
}

async function timelines(db: Client, ids: string[]): Promise<Map<string, Timeline>> {
  const { rows } = await db.query<{ id: string; state: string; error_code: string | null; to_state: string; at_ms: string }>(
    `SELECT s.id, s.state, s.error_code, t.to_state, extract(epoch FROM t.at) * 1000 AS at_ms
       FROM settlements s JOIN settlement_transitions t ON t.settlement_id = s.id
      WHERE s.id = ANY($1)`,
    [ids],
  );
  const byId = new Map<string, Timeline>();
  for (const row of rows) {
    const timeline = byId.get(row.id) ?? { state: row.state, errorCode: row.error_code, at: {} };
    const at = Number(row.at_ms);
    timeline.at[row.to_state] = Math.min(timeline.at[row.to_state] ?? Infinity, at);
    byId.set(row.id, timeline);
  }
  return byId;
}

const median = (values: number[]) => round(summarize(values).p50, 1);

/** The settle requests accepted (answered 200), by settlement id, for waitForFinal. */
export const acceptedIds = (requests: readonly SettleRequest[]): string[] => requests.filter((r) => r.settlementId).map((r) => r.settlementId!);

/**
 * What became of each request: call once waitForFinal returned. `offerSeconds`: the window a rate-limited
 * offer covers (requests / rate). Its throughput is settled / that window, unless draining took longer:
 * then the time from the first request to the last `settled`, less the pipeline's own delay, which would
 * otherwise count as slowness (on a short step with 1 s blocks that delay, ~1.5 s, is a large part of the
 * span). The delay is the median latency of the first tenth of the requests sent, which met no queue.
 */
export async function settleOutcome(db: Client, requests: readonly SettleRequest[], offerSeconds = 0): Promise<SettleOutcome> {
  const accepted = requests.filter((r) => r.settlementId);
  const lines = await timelines(db, acceptedIds(requests));
  const latencies: number[] = [];
  /** [requestedAt, latency] of each settled request */
  const bySend: Array<[number, number]> = [];
  const stages = { toPickup: [] as number[], checkAllowance: [] as number[], feeTransfer: [] as number[], submitTransfer: [] as number[], transferConfirmed: [] as number[] };
  const failureCodes: Record<string, number> = {};
  let lastSettled = 0;
  let settled = 0;
  let failed = 0;
  for (const request of accepted) {
    const t = lines.get(request.settlementId!);
    if (!t) continue;
    if (t.state === 'failed') {
      failed++;
      failureCodes[t.errorCode ?? 'unknown'] = (failureCodes[t.errorCode ?? 'unknown'] ?? 0) + 1;
      continue;
    }
    if (t.state !== 'settled') continue;
    settled++;
    const at = t.at;
    lastSettled = Math.max(lastSettled, at.settled);
    latencies.push(at.settled - request.requestedAt);
    bySend.push([request.requestedAt, at.settled - request.requestedAt]);
    if (at.check_allowance) stages.toPickup.push(at.check_allowance - request.requestedAt);
    if (at.check_allowance && at.collect_fee) stages.checkAllowance.push(at.collect_fee - at.check_allowance);
    if (at.collect_fee && at.fee_collected) stages.feeTransfer.push(at.fee_collected - at.collect_fee);
    if (at.fee_collected && at.executing) stages.submitTransfer.push(at.executing - at.fee_collected);
    if (at.executing) stages.transferConfirmed.push(at.settled - at.executing);
  }
  const sent = requests.filter((r) => r.requestedAt > 0);
  const firstRequest = Math.min(...sent.map((r) => r.requestedAt));
  const span = (lastSettled - firstRequest) / 1000;
  const firstTenth = bySend.sort((a, b) => a[0] - b[0]).slice(0, Math.max(3, Math.ceil(bySend.length / 10)));
  const pipelineSeconds = summarize(firstTenth.map(([, latency]) => latency)).p50 / 1000;
  const seconds = offerSeconds > 0 ? Math.max(offerSeconds, span - pipelineSeconds) : span;
  return {
    requested: requests.length,
    settled,
    failed,
    unfinished: accepted.length - settled - failed,
    rejected: requests.length - accepted.length,
    perSecond: settled > 0 ? round(settled / seconds, 1) : 0,
    latencyMs: roundSummary(summarize(latencies), 0),
    medianStagesMs: {
      toPickup: median(stages.toPickup),
      checkAllowance: median(stages.checkAllowance),
      feeTransfer: median(stages.feeTransfer),
      submitTransfer: median(stages.submitTransfer),
      transferConfirmed: median(stages.transferConfirmed),
    },
    failureCodes,
  };
}

/** The rate the load generator achieved: n requests sent over n-1 intervals, from the first to the last. */
export function offeredPerSecond(requests: readonly SettleRequest[]): number {
  const times = requests.filter((r) => r.requestedAt > 0).map((r) => r.requestedAt);
  if (times.length < 2) return 0;
  return round((times.length - 1) / ((Math.max(...times) - Math.min(...times)) / 1000), 1);
}
