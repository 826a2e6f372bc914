// `npm run bench:custody`: what keeping the relayer key out of the worker costs (issue 24). Three of our
// facilitators side by side on one anvil with 1 s blocks, all on the atomic path with no treasury key,
// each worker sending from one relayer key held differently:
// - local: the key in the worker's environment (RELAYER_PRIVATE_KEYS);
// - KMS: RELAYER_SIGNERS=kms:<arn>, through @aws-sdk/client-kms to a local server speaking KMS's JSON
//   protocol with SigV4 (@facilitator/signers/testing), which signs with a real secp256k1 key; a real KMS
//   adds its network round trip (a few ms in the same region) on top of what is measured here;
// - HSM: RELAYER_SIGNERS=pkcs11:<uri>, a non-extractable key in SoftHSM2 through PKCS#11.
// The settlement executor names the three relayers, so each worker batches from its own key.
//
// Three measurements: the signature itself (signDigest in this process, one at a time); paid requests
// through @x402/express + @x402/fetch, one at a time for each facilitator, the three at once (as bench:paid);
// and settle capacity: a burst of Form B settle requests of payments verified before, one facilitator after
// the other, settled/s from the first request to the last `settled`.
import type { Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Devnet } from '@facilitator/evm-devnet';
import { executorTargets } from '@facilitator/payment-mechanisms';
import { setUpExecutor } from '@facilitator/evm-executor';
import { createSigner, type SignerEnvironment } from '@facilitator/signers';
import { createSoftHsmToken, startKmsProtocolServer, type KmsProtocolServer, type SoftHsmToken } from '@facilitator/signers/testing';
import { describeProblems, FEE_UNITS, startChain, startFacilitator, stopChainOnSignal, type Facilitator, type FacilitatorOptions } from './facilitator-stack';
import type { LogProblems } from './app-logs';
import { machineInfo, versions, type MachineInfo } from './machine';
import { batchesOf, settlementsOfRequests, type SettlementsOfRequests } from './paid-request-bench';
import { PaymentFactory, PRICE_UNITS } from './payments';
import { startCpuMeter, waitForQuietMachine, type CpuUsage } from './proc';
import { envNumber, log, runBenchmarkMain, table, writeResult } from './results';
import { acceptedIds, offerSettles, settleOutcome, verifyPayments, waitForFinal, type SettleOutcome, type SettleRequest } from './settle-load';
import { round, roundSummary, summarize, type LatencySummary } from './stats';
import { buyerOf, listen, merchantApp, paidRequest, PAID_PRICE_UNITS, type PaidSample } from './x402-buyer';

export type CustodyName = 'local' | 'kms' | 'hsm';
export const CUSTODY_LABELS: Record<CustodyName, string> = {
  local: 'local key (worker environment)',
  kms: 'AWS KMS (protocol server, SigV4)',
  hsm: 'PKCS#11 HSM (SoftHSM2)',
};

export interface CustodyTargetResult {
  custody: CustodyName;
  label: string;
  /** the relayer's address, derived by the signer at start-up */
  relayer: string;
  /** signDigest in this process, one at a time */
  signMs: LatencySummary;
  paid: {
    requests: number;
    paid: number;
    firstError?: string;
    /** client call → resource body, paid requests only */
    latencyMs: LatencySummary;
  } & SettlementsOfRequests;
  capacity: SettleOutcome & {
    /** settle transactions the worker sent for the burst (each a batch), and their mean size */
    settleTransactions: number;
    meanBatchSize: number;
    /** KMS Sign calls during the burst (KMS only) */
    kmsSignCalls?: number;
    cpu: CpuUsage;
  };
}

export interface CustodyResults {
  benchmark: 'custody';
  startedAt: string;
  machine: MachineInfo;
  versions: Record<string, string>;
  settings: {
    blockTimeSeconds: number;
    signSamples: number;
    paidRequests: number;
    jitterMs: number;
    warmupRequests: number;
    capacitySettlements: number;
    capacityConnections: number;
    apiProcesses: number;
    batchWindowMs: string;
  };
  targets: CustodyTargetResult[];
  /** each custody ÷ local key: paid p50, capacity settled/s */
  ratios: Partial<Record<CustodyName, { paidP50: number; settledPerSecond: number; signP50: number }>>;
  /** every settlement of every phase settled, none failed or unfinished, every request paid */
  allSettled: boolean;
  problems: Record<CustodyName, LogProblems>;
}

interface Custody {
  name: CustodyName;
  relayer: string;
  /** how the worker is given the key */
  options: Pick<FacilitatorOptions, 'relayerKeys' | 'relayerSigners'>;
  /** the same key as `createSigner` takes it, for the in-process signing measurement */
  spec: string;
  env: SignerEnvironment;
}

async function custodies(devnet: Devnet, kms: KmsProtocolServer, hsm: SoftHsmToken): Promise<Custody[]> {
  const local = devnet.accounts.relayers[0];
  const kmsKey = kms.createKey({ alias: 'alias/bench-relayer' });
  const hsmKey = await hsm.generateKey('bench-relayer', { pin: 'file' });
  return [
    { name: 'local', relayer: local.address, options: { relayerKeys: [local.privateKey] }, spec: `local:${local.privateKey}`, env: {} },
    { name: 'kms', relayer: kmsKey.address, options: { relayerSigners: { spec: `kms:${kmsKey.arn}`, env: kms.env } }, spec: `kms:${kmsKey.arn}`, env: kms.env },
    { name: 'hsm', relayer: hsmKey.address, options: { relayerSigners: { spec: hsmKey.uri, env: hsm.env } }, spec: hsmKey.uri, env: { ...process.env, ...hsm.env } },
  ];
}

/** Time of one signature, by the same code the worker signs with, one after the other. */
async function signLatency(custody: Custody, samples: number): Promise<LatencySummary> {
  const signer = await createSigner(custody.spec, custody.env);
  try {
    if (signer.address !== custody.relayer) throw new Error(`${custody.name}: the signer's address ${signer.address} is not the relayer's ${custody.relayer}`);
    for (let i = 0; i < 5; i++) await signer.signDigest(randomBytes(32)); // warm: sessions, connections
    const times: number[] = [];
    for (let i = 0; i < samples; i++) {
      const started = performance.now();
      await signer.signDigest(randomBytes(32));
      times.push(performance.now() - started);
    }
    return roundSummary(summarize(times), 2);
  } finally {
    await signer.close();
  }
}

async function paidPhase(facilitators: Facilitator[], merchantUrls: string[], devnet: Devnet, count: number, jitterMs: number) {
  const buyer = buyerOf(devnet);
  const all = await Promise.all(
    merchantUrls.map(async (url) => {
      const samples: PaidSample[] = [];
      for (let i = 0; i < count; i++) {
        await sleep(Math.random() * jitterMs);
        samples.push(await paidRequest(`${url}/resource`, buyer));
      }
      return samples;
    }),
  );
  return Promise.all(
    facilitators.map(async (f, i) => {
      const samples = all[i];
      const paid = samples.filter((s) => s.ok);
      const failed = samples.find((s) => !s.ok);
      return {
        requests: samples.length,
        paid: paid.length,
        ...(failed ? { firstError: failed.error } : {}),
        latencyMs: roundSummary(summarize(paid.map((s) => s.endedAt - s.startedAt)), 0),
        ...(await settlementsOfRequests(f, samples)),
      };
    }),
  );
}

async function capacityPhase(f: Facilitator, devnet: Devnet, count: number, connections: number, kms: KmsProtocolServer | undefined): Promise<CustodyTargetResult['capacity']> {
  const ids = await verifyPayments(f.api.url, new PaymentFactory(devnet), count);
  const requests: SettleRequest[] = ids.map((verificationId) => ({ verificationId, requestedAt: 0 }));
  const kmsSignsBefore = kms?.callCount('Sign') ?? 0;
  const cpu = startCpuMeter({ trees: { api: f.api.child.pid!, worker: f.worker.child.pid!, anvil: devnet.pid, bench: process.pid } });
  await offerSettles(f.api.url, devnet, requests, { connections });
  await waitForFinal(f.db, acceptedIds(requests), 180_000);
  const usage = cpu.stop();
  const outcome = await settleOutcome(f.db, requests);
  const { batches, meanBatchSize } = await batchesOf(f.db, acceptedIds(requests));
  return {
    ...outcome,
    settleTransactions: batches,
    meanBatchSize,
    ...(kms ? { kmsSignCalls: kms.callCount('Sign') - kmsSignsBefore } : {}),
    cpu: usage,
  };
}

export async function runCustodyBench(): Promise<CustodyResults> {
  const settings: CustodyResults['settings'] = {
    blockTimeSeconds: 1,
    signSamples: envNumber('BENCH_CUSTODY_SIGN_SAMPLES', 200),
    paidRequests: envNumber('BENCH_CUSTODY_PAID_REQUESTS', 30),
    jitterMs: envNumber('BENCH_CUSTODY_JITTER_MS', 1_000),
    warmupRequests: envNumber('BENCH_CUSTODY_WARMUP', 3),
    capacitySettlements: envNumber('BENCH_CUSTODY_SETTLEMENTS', 200),
    capacityConnections: envNumber('BENCH_CUSTODY_CONNECTIONS', 20),
    // one API process each: the figures are the worker's (and three facilitators' pools must fit in Postgres)
    apiProcesses: envNumber('BENCH_API_PROCESSES', 1),
    batchWindowMs: 'default',
  };
  const busy = await waitForQuietMachine();
  if (busy > 0.15) log(`machine still ${Math.round(busy * 100)}% busy with other work; measuring anyway`);
  const startedAt = new Date().toISOString();
  const paidPerTarget = settings.warmupRequests + settings.paidRequests;
  const devnet = await startChain({
    blockTime: settings.blockTimeSeconds,
    relayerCount: 1,
    payerSpend: BigInt(3 * paidPerTarget + 10) * PAID_PRICE_UNITS + BigInt(3 * settings.capacitySettlements + 10) * PRICE_UNITS,
    fees: 3 * (paidPerTarget + settings.capacitySettlements) + 10,
  });
  const unregisterChain = stopChainOnSignal(devnet);
  const servers: Server[] = [];
  const facilitators: Facilitator[] = [];
  const stopped = new Set<Facilitator>();
  let kms: KmsProtocolServer | undefined;
  let hsm: SoftHsmToken | undefined;
  let problems: CustodyResults['problems'] | undefined;
  let list: Custody[] = [];
  try {
    [kms, hsm] = await Promise.all([startKmsProtocolServer(), createSoftHsmToken({ label: 'bench-relayers' })]);
    list = await custodies(devnet, kms, hsm);
    for (const c of list) await devnet.setEthBalance(c.relayer, 10n ** 19n);
    log('setting up the settlement executor for the three relayers (the treasury signs and pays)');
    const status = await setUpExecutor(
      devnet.provider,
      {
        chainId: devnet.chainId,
        token: devnet.token,
        targets: executorTargets({ chainId: devnet.chainId, tokenAddress: devnet.token.toLowerCase() }),
        treasury: devnet.accounts.treasury.address,
        fee: FEE_UNITS,
        relayers: list.map((c) => c.relayer),
      },
      { treasuryKey: devnet.accounts.treasury.privateKey, senderKey: devnet.accounts.treasury.privateKey },
    );
    if (status.state !== 'ready') throw new Error(`the settlement executor could not be set up: ${status.why}`);

    log(`signing: ${settings.signSamples} digests per signer, one at a time`);
    const signMs: LatencySummary[] = [];
    for (const c of list) signMs.push(await signLatency(c, settings.signSamples));

    log('starting three facilitators (atomic, keyless workers), one per custody');
    const started = await Promise.allSettled(list.map((c) => startFacilitator(devnet, { ...c.options, apiProcesses: settings.apiProcesses, workerEnv: { SETTLEMENT_MODE: 'atomic' } })));
    for (const s of started) if (s.status === 'fulfilled') facilitators.push(s.value);
    const notStarted = started.find((s) => s.status === 'rejected');
    if (notStarted) throw notStarted.reason;
    const merchantUrls: string[] = [];
    for (const f of facilitators) merchantUrls.push(await listen(merchantApp(devnet, `${f.api.url}/x402`), servers));

    log(`warm-up: ${settings.warmupRequests} paid requests per facilitator (not counted)`);
    const buyer = buyerOf(devnet);
    await Promise.all(
      merchantUrls.map(async (url, i) => {
        for (let k = 0; k < settings.warmupRequests; k++) {
          const s = await paidRequest(`${url}/resource`, buyer);
          if (!s.ok) throw new Error(`warm-up request to ${list[i].name} failed: ${s.error}`);
        }
      }),
    );
    log(`paid requests: ${settings.paidRequests} per facilitator, one at a time each, the three at once`);
    const paid = await paidPhase(facilitators, merchantUrls, devnet, settings.paidRequests, settings.jitterMs);
    const capacity: Array<CustodyTargetResult['capacity']> = [];
    const problemsOf: Partial<CustodyResults['problems']> = {};
    for (const [i, f] of facilitators.entries()) {
      log(`settle capacity: ${list[i].name}, ${settings.capacitySettlements} settle requests, ${settings.capacityConnections} in flight`);
      capacity.push(await capacityPhase(f, devnet, settings.capacitySettlements, settings.capacityConnections, list[i].name === 'kms' ? kms : undefined));
      await sleep(500); // anything logged after the last answer
      problemsOf[list[i].name] = f.problems();
      // its database pools close with it: three facilitators' full pools would not fit Postgres's 100 connections
      await f.stop();
      stopped.add(f);
    }
    problems = problemsOf as CustodyResults['problems'];

    const targets: CustodyTargetResult[] = list.map((c, i) => ({ custody: c.name, label: CUSTODY_LABELS[c.name], relayer: c.relayer, signMs: signMs[i], paid: paid[i], capacity: capacity[i] }));
    const local = targets[0];
    const ratios: CustodyResults['ratios'] = {};
    for (const t of targets.slice(1)) {
      ratios[t.custody] = {
        paidP50: round(t.paid.latencyMs.p50 / local.paid.latencyMs.p50, 2),
        settledPerSecond: round(t.capacity.perSecond / local.capacity.perSecond, 2),
        signP50: round(t.signMs.p50 / local.signMs.p50, 1),
      };
    }
    const allSettled = targets.every(
      (t) => t.paid.paid === t.paid.requests && t.paid.settlements?.settled === t.paid.requests && t.capacity.settled === t.capacity.requested && t.capacity.failed + t.capacity.unfinished + t.capacity.rejected === 0,
    );
    const result: CustodyResults = { benchmark: 'custody', startedAt, machine: machineInfo(), versions: await versions(), settings, targets, ratios, allSettled, problems };
    // a custody that loses or fails a payment is not a figure to publish: the run fails (its figures kept aside)
    if (!allSettled) {
      const file = writeResult('custody-failed', result);
      throw new Error(`not every payment settled once (see ${file}): ${targets.map((t) => `${t.custody} paid ${t.paid.paid}/${t.paid.requests}, settled ${t.capacity.settled}/${t.capacity.requested}`).join('; ')}`);
    }
    return result;
  } finally {
    if (!problems) facilitators.forEach((f, i) => describeProblems(`${list[i]?.name} facilitator`, f.problems()));
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
    for (const f of facilitators.filter((x) => !stopped.has(x))) await f.stop().catch((err: unknown) => log(`stopping: ${(err as Error).message}`));
    await kms?.close();
    await hsm?.destroy();
    await devnet.stop();
    unregisterChain();
  }
}

export function printCustody(r: CustodyResults): void {
  const rows: Array<Array<string | number>> = [['custody', 'sign p50 ms', 'sign p99 ms', 'paid', 'paid p50 ms', 'paid p95 ms', '→settled p50', 'capacity settled/s', 'settled', 'failed', 'batch size', 'worker cores']];
  for (const t of r.targets) {
    rows.push([
      t.label,
      t.signMs.p50,
      t.signMs.p99,
      `${t.paid.paid}/${t.paid.requests}`,
      t.paid.latencyMs.p50,
      t.paid.latencyMs.p95,
      t.paid.requestToSettledMs?.p50 ?? '',
      t.capacity.perSecond,
      t.capacity.settled,
      t.capacity.failed + t.capacity.unfinished,
      t.capacity.meanBatchSize,
      t.capacity.cpu.cores.worker ?? '',
    ]);
  }
  process.stdout.write(`\nrelayer key custody, atomic path, 1 s blocks — ${r.machine.cpuModel}, ${r.machine.cores} cores\n${table(rows)}\n`);
  process.stdout.write(`÷ local key: ${JSON.stringify(r.ratios)}; every payment settled: ${r.allSettled}\n`);
  for (const t of r.targets) if (t.paid.firstError) process.stdout.write(`${t.custody}: first failed paid request: ${t.paid.firstError}\n`);
  for (const [name, p] of Object.entries(r.problems)) {
    if (p.errors + p.warnings > 0) process.stdout.write(`${name}: ${p.errors} error / ${p.warnings} warning lines: ${p.messages.map((m) => `${m.level} ×${m.count} ${m.message}`).join('; ')}\n`);
  }
}

if (require.main === module) runBenchmarkMain('custody', runCustodyBench, printCustody);
