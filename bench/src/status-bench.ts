// `npm run bench:status`: the public status page under load while settlements run. autocannon GETs
// /status.json (BENCH_STATUS_SECONDS, default 10 s) and then /status (BENCH_STATUS_PAGE_SECONDS, 5 s) as fast
// as BENCH_STATUS_CONNECTIONS connections can, against the compiled API cluster, while Form B settlements are
// offered at BENCH_STATUS_SETTLE_RATE/s (1 s blocks, 3 relayers) and settle through the worker. The target:
// each holds ≥ 1,000 requests/s. One computation per STATUS_MAX_AGE_MS per API process serves every visitor,
// so the figures are the HTTP shell's cost plus a few aggregate queries every 5 s (the hour and day every 60 s).
import autocannon from 'autocannon';
import { machineInfo, versions, type MachineInfo } from './machine';
import { PaymentFactory } from './payments';
import { startCpuMeter, waitForQuietMachine, type CpuUsage } from './proc';
import { envNumber, log, runBenchmarkMain, table } from './results';
import { acceptedIds, offerSettles, settleOutcome, verifyPayments, waitForFinal, type SettleOutcome, type SettleRequest } from './settle-load';
import { startSettleStack } from './settle-stack';
import { round } from './stats';

const TARGET_PER_SECOND = 1_000;

export interface StatusRun {
  path: string;
  seconds: number;
  requests: number;
  perSecond: number;
  latencyMs: { p50: number; p99: number; max: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  cpu: CpuUsage;
  /** API (primary + cluster workers) CPU per answered request */
  apiCpuUsPerRequest: number;
  postgresCpuUsPerRequest: number;
  /** the settlements offered meanwhile */
  settle: SettleOutcome;
}

export interface StatusResults {
  benchmark: 'status';
  startedAt: string;
  machine: MachineInfo;
  versions: Record<string, string>;
  settings: { connections: number; settleRatePerSecond: number; apiProcesses: number; blockTimeSeconds: number; relayers: number; statusMaxAgeMs: number };
  json: StatusRun;
  page: StatusRun;
  /** settlements the status JSON reported settled in its 5-minute window at the end: the figures moved under load */
  settledShownAtEnd: number;
  targets: { perSecond: number; jsonMet: boolean; pageMet: boolean };
}

/** A closed loop of GETs at one path for `seconds`. */
function getRun(url: string, path: string, seconds: number, connections: number): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon({ url: `${url}${path}`, connections, pipelining: 1, duration: seconds, timeout: 10 }, (err, result) => (err ? reject(err) : resolve(result)));
  });
}

export async function runStatusBench(): Promise<StatusResults> {
  const seconds = envNumber('BENCH_STATUS_SECONDS', 10);
  const pageSeconds = envNumber('BENCH_STATUS_PAGE_SECONDS', 5);
  const settings: StatusResults['settings'] = {
    connections: envNumber('BENCH_STATUS_CONNECTIONS', 32),
    settleRatePerSecond: envNumber('BENCH_STATUS_SETTLE_RATE', 10),
    apiProcesses: envNumber('BENCH_API_PROCESSES', 2),
    blockTimeSeconds: 1,
    relayers: 3,
    // the API's default (STATUS_MAX_AGE_MS)
    statusMaxAgeMs: 5_000,
  };
  const warmup = 10;
  const perPhase = (s: number) => Math.round(settings.settleRatePerSecond * s);
  const total = warmup + perPhase(seconds) + perPhase(pageSeconds);
  const busy = await waitForQuietMachine();
  if (busy > 0.15) log(`machine still ${Math.round(busy * 100)}% busy with other work; measuring anyway`);
  const startedAt = new Date().toISOString();
  const stack = await startSettleStack({ blockTime: settings.blockTimeSeconds, relayers: settings.relayers, settlements: total, apiProcesses: settings.apiProcesses });
  const { devnet, db, api } = stack;
  try {
    log(`verifying ${total} payments to settle (not timed)`);
    const ids = await verifyPayments(api.url, new PaymentFactory(devnet), total);
    const requests: SettleRequest[] = ids.map((verificationId) => ({ verificationId, requestedAt: 0 }));
    const [warm, forJson, forPage] = [requests.slice(0, warmup), requests.slice(warmup, warmup + perPhase(seconds)), requests.slice(warmup + perPhase(seconds))];
    // not measured: cold code in the API processes and the worker
    await Promise.all([offerSettles(api.url, devnet, warm, { connections: 4 }), getRun(api.url, '/status.json', 2, settings.connections), getRun(api.url, '/status', 1, settings.connections)]);
    await waitForFinal(db, acceptedIds(warm), 60_000);

    const phase = async (path: string, s: number, settles: SettleRequest[]): Promise<StatusRun> => {
      log(`measuring ${s} s of GET ${path} (${settings.connections} connections) while settlements run at ${settings.settleRatePerSecond}/s`);
      const cpu = startCpuMeter({ trees: stack.cpuTrees });
      const [result] = await Promise.all([getRun(api.url, path, s, settings.connections), offerSettles(api.url, devnet, settles, { ratePerSecond: settings.settleRatePerSecond })]);
      const usage = cpu.stop();
      await waitForFinal(db, acceptedIds(settles), 60_000);
      const answered = result['2xx'];
      const perRequest = (cores: number | undefined) => round(((cores ?? 0) * usage.seconds * 1e6) / Math.max(1, answered), 0);
      return {
        path,
        seconds: result.duration,
        requests: answered,
        perSecond: round(answered / result.duration, 0),
        latencyMs: { p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max },
        non2xx: result.non2xx,
        errors: result.errors,
        timeouts: result.timeouts,
        cpu: usage,
        apiCpuUsPerRequest: perRequest(usage.cores.api),
        postgresCpuUsPerRequest: perRequest(usage.cores.postgres),
        settle: await settleOutcome(db, settles, s),
      };
    };
    const json = await phase('/status.json', seconds, forJson);
    const page = await phase('/status', pageSeconds, forPage);
    const status = (await (await fetch(`${api.url}/status.json`)).json()) as { networks: Array<{ settle: { '5m': { settled: number } } }> };
    return {
      benchmark: 'status',
      startedAt,
      machine: machineInfo(),
      versions: await versions(),
      settings,
      json,
      page,
      settledShownAtEnd: status.networks[0].settle['5m'].settled,
      targets: {
        perSecond: TARGET_PER_SECOND,
        jsonMet: json.perSecond >= TARGET_PER_SECOND && json.non2xx + json.errors + json.timeouts === 0,
        pageMet: page.perSecond >= TARGET_PER_SECOND && page.non2xx + page.errors + page.timeouts === 0,
      },
    };
  } finally {
    await stack.stop();
  }
}

export function printStatus(r: StatusResults): void {
  const rows: Array<Array<string | number>> = [
    ['GET', 'req/s', 'p50 ms', 'p99 ms', 'answered', 'non-2xx', 'errors', 'API µs/req', 'Postgres µs/req', 'settled/s meanwhile'],
    ...[r.json, r.page].map((p) => [p.path, p.perSecond, p.latencyMs.p50, p.latencyMs.p99, p.requests, p.non2xx, p.errors + p.timeouts, p.apiCpuUsPerRequest, p.postgresCpuUsPerRequest, p.settle.perSecond]),
  ];
  process.stdout.write(`\nstatus page under load — ${r.machine.cpuModel}, ${r.machine.cores} cores\n${table(rows)}\n`);
  process.stdout.write(`target ≥ ${r.targets.perSecond}/s: JSON ${r.targets.jsonMet ? 'met' : 'missed'}, page ${r.targets.pageMet ? 'met' : 'missed'}; ${r.settledShownAtEnd} settled shown in the 5 min window at the end\n`);
}

if (require.main === module) runBenchmarkMain('status-page', runStatusBench, printStatus);
