// bench:capacity through the standard x402 API (issue 41, item 5): payments made by the real `@x402/evm`
// client (`exact`, EIP-3009; x402Client's createPaymentPayload, as @x402/fetch pays) and settled as a
// merchant's x402 middleware settles them — POST {facilitator}/settle with { x402Version, paymentPayload,
// paymentRequirements }, and once more with the same payload when the answer is `settlement_pending` with a
// transaction (@x402/core's settleWithPendingRetry) — all offered at once, on one anvil with 2 s blocks:
// - ours: `POST /x402/settle`, the atomic path set up as README says (the treasury delegates to the settlement
//   executor; 3 relayer keys; the fee charged); a fresh database per run;
// - the reference: @x402/core's x402Facilitator + @x402/evm's exact scheme on viem (reference-facilitator.ts),
//   `POST /settle`, no fee, a fourth key;
// - ours with the payments spread over 100 merchants, and ours with two worker processes;
// - a flood: strangers offering ten times our measured capacity in payments that will fail the pre-flight
//   (a throwaway unfunded payer each, fresh nonces, their own address as payTo) beside honest x402 traffic.
// CPU per settlement per process from /proc/<pid>/stat (utime + stime) over each run (proc.ts).
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { computeAddress, Contract, getAddress, keccak256, Wallet, toUtf8Bytes } from 'ethers';
import { x402Client } from '@x402/core/client';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { ExactEvmScheme as ExactEvmClientScheme } from '@x402/evm/exact/client';
import { privateKeyToAccount } from 'viem/accounts';
import { authorizationToJson, domainSeparator } from '@facilitator/core';
import { setUpDevnetExecutor, type Devnet } from '@facilitator/evm-devnet';
import { transferAuthorizationDigest } from '@facilitator/payment-mechanisms';
import type { LogProblems } from './app-logs';
import { FEE_UNITS, startChain, startFacilitator, stopChainOnSignal, type Facilitator } from './facilitator-stack';
import { startCpuMeter, watchPostgresBackends, type CpuUsage } from './proc';
import { startReferenceFacilitator } from './reference-facilitator';
import { envNumber, log } from './results';
import { adminDatabaseUrl } from './stack';
import { epochMs, round, roundSummary, summarize, type LatencySummary } from './stats';
import { PAID_PRICE_UNITS } from './x402-buyer';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const native = require('secp256k1/bindings') as { ecdsaSign(msg32: Uint8Array, seckey: Uint8Array): { signature: Uint8Array; recid: number } };

/** issue 41's targets on this path */
export const X402_TARGETS = {
  ratioToReference: 2,
  oursCpuMsPerSettlement: 12,
  nodeCpuRatioToReference: 1.2,
  oneMerchantToHundred: 0.9,
  twoWorkersToOne: 1,
  floodHonestStopped: 0,
  floodChargedAndRefused: 0,
  floodP50Ratio: 2,
};

/** Our processes, charged with a settlement's CPU: the API cluster, the workers, Postgres and Redis. */
export const OUR_PROCESSES = ['api', 'worker', 'worker2', 'worker3', 'postgres', 'redis'];

export interface X402Settings {
  blockTimeSeconds: number;
  payments: number;
  inFlight: number;
  warmup: number;
  relayers: number;
  apiProcesses: number;
  merchants: number;
  priceUnits: string;
  feeUnits: string;
  referencePollingIntervalMs: number;
}

export interface X402Run {
  facilitator: 'ours' | 'reference';
  merchants: number;
  workers: number;
  payments: number;
  inFlight: number;
  /** answered success */
  settled: number;
  /** answered anything else (after the one retry of a pending answer) */
  refused: number;
  /** refusals by errorReason (or HTTP status) */
  refusals: Record<string, number>;
  /** pending answers retried once, as @x402/core's resource server does */
  retried: number;
  /** settled ÷ seconds from the first request to the last success */
  perSecond: number;
  seconds: number;
  /** request → success answer, settled payments */
  latencyMs: LatencySummary;
  cpu: CpuUsage;
  /** CPU ms per settlement of each process group (its cores × the run's seconds ÷ settled) */
  cpuMsPerSettlement: Record<string, number>;
  /** ours: API + workers + Postgres + Redis; the reference: its process */
  ownMsPerSettlement: number;
  /** anvil, the chain node */
  nodeMsPerSettlement: number;
  /** ours: the states its settlements of this run ended in */
  settlementStates?: Record<string, number>;
  problems: LogProblems;
}

export interface HonestOutcome {
  offered: number;
  /** answered success */
  settled: number;
  /** refused, and the payment not executed on chain: a settlement stopped */
  stopped: number;
  /** refused, and yet the payment executed on chain (its nonce used): the buyer charged and refused */
  chargedAndRefused: number;
  refusals: Record<string, number>;
  /** request → final answer (with the retry), every answered request */
  latencyMs: LatencySummary;
}

export interface FloodResult {
  /** the capacity the flood is a multiple of: phase (a)'s ours settled/s, or BENCH_FLOOD_CAPACITY */
  capacityPerSecond: number;
  capacitySource: 'measured' | 'BENCH_FLOOD_CAPACITY';
  factor: number;
  honestRatePerSecond: number;
  floodRatePerSecond: number;
  unflooded: HonestOutcome;
  flooded: HonestOutcome;
  flood: {
    offered: number;
    answeredPerSecond: number;
    succeeded: number;
    answers: Record<string, number>;
    latencyMs: LatencySummary;
    /** our processes' CPU over the flooded run ÷ the strangers' payments: at most what refusing one costs us (the honest traffic's share included) */
    ownMsPerStranger?: number;
  };
  p50Ratio: number;
  cpu: CpuUsage;
  problems: LogProblems;
}

export interface X402Results {
  settings: X402Settings;
  ours?: X402Run;
  reference?: X402Run;
  /** ours ÷ the reference, settled/s */
  ratio?: number;
  hundredMerchants?: X402Run;
  twoWorkers?: X402Run;
  flood?: FloodResult;
}

export type X402Part = 'x402' | 'merchants' | 'workers' | 'flood';

// ---------------------------------------------------------------------------------------------- HTTP

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

/**
 * JSON POSTs over keep-alive sockets from one local address: the honest buyers' merchants and the strangers
 * come from different addresses (127.0.0.2, 127.0.0.3), as they would, so a per-client budget can tell them apart.
 */
function poster(localAddress: string): { post(url: string, body: unknown): Promise<Answer>; close(): void } {
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity, localAddress });
  return {
    post(url, body) {
      const data = Buffer.from(JSON.stringify(body));
      return new Promise((resolve, reject) => {
        const request = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': data.length } }, (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (c: Buffer) => chunks.push(c));
          response.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: Record<string, unknown>;
            try {
              parsed = JSON.parse(text) as Record<string, unknown>;
            } catch {
              parsed = { raw: text.slice(0, 300) };
            }
            resolve({ status: response.statusCode ?? 0, body: parsed });
          });
          response.on('error', reject);
        });
        request.setTimeout(120_000, () => request.destroy(new Error('timed out after 120 s')));
        request.on('error', reject);
        request.end(data);
      });
    },
    close: () => agent.destroy(),
  };
}

// ------------------------------------------------------------------------------------------ payments

export interface X402Payment {
  paymentPayload: PaymentPayload;
  requirements: PaymentRequirements;
  payer: string;
  /** bytes32, lower case */
  nonce: string;
}

export interface Merchant {
  address: string;
  privateKey: string;
}

function requirementsFor(devnet: Devnet, payTo: string): PaymentRequirements {
  return {
    scheme: 'exact',
    network: `eip155:${devnet.chainId}`,
    amount: PAID_PRICE_UNITS.toString(),
    asset: getAddress(devnet.token),
    payTo: getAddress(payTo),
    maxTimeoutSeconds: 300,
    extra: { name: devnet.eip712Domain.name, version: devnet.eip712Domain.version },
  };
}

/** `count` payments by the devnet payer, signed by @x402/evm's exact client, round-robin over `merchants`. */
export async function honestPayments(devnet: Devnet, merchants: readonly Merchant[], count: number): Promise<X402Payment[]> {
  const account = privateKeyToAccount(devnet.accounts.payer.privateKey as `0x${string}`);
  const client = new x402Client()
    .register('eip155:*', new ExactEvmClientScheme(account))
    .setSpendControls({ allowedAssets: [{ network: `eip155:${devnet.chainId}`, asset: getAddress(devnet.token), maxAmountPerPayment: PAID_PRICE_UNITS.toString() }] });
  const payments: X402Payment[] = [];
  for (let i = 0; i < count; i++) {
    const requirements = requirementsFor(devnet, merchants[i % merchants.length].address);
    const paymentPayload = await client.createPaymentPayload({ x402Version: 2, resource: { url: 'http://merchant.invalid/resource' }, accepts: [requirements] });
    const nonce = (paymentPayload.payload as { authorization: { nonce: string } }).authorization.nonce.toLowerCase();
    payments.push({ paymentPayload, requirements, payer: account.address, nonce });
  }
  return payments;
}

/**
 * Strangers' payments, in the shape @x402/evm's client makes (`template`, one honest payload): each signed by a
 * throwaway key of its own that holds nothing, with a fresh nonce, paying its own address. Signed with
 * libsecp256k1 (microseconds) rather than viem, so thousands are made before the run in a second or two.
 */
export function strangerPayments(devnet: Devnet, template: X402Payment, count: number): X402Payment[] {
  const separator = domainSeparator(devnet.eip712Domain);
  const now = Math.floor(Date.now() / 1000);
  const payments: X402Payment[] = [];
  for (let i = 0; i < count; i++) {
    const key = randomBytes(32);
    const address = computeAddress('0x' + key.toString('hex'));
    const requirements = requirementsFor(devnet, address);
    const auth = { from: address, to: address, value: PAID_PRICE_UNITS, validAfter: BigInt(now - 600), validBefore: BigInt(now + 300), nonce: '0x' + randomBytes(32).toString('hex') };
    const { signature, recid } = native.ecdsaSign(transferAuthorizationDigest(separator, auth), key);
    const paymentPayload = {
      ...template.paymentPayload,
      accepted: requirements,
      payload: { authorization: authorizationToJson(auth), signature: '0x' + Buffer.from(signature).toString('hex') + (27 + recid).toString(16) },
    } as PaymentPayload;
    payments.push({ paymentPayload, requirements, payer: address, nonce: auth.nonce });
  }
  return payments;
}

/**
 * `count` merchants besides the devnet's, each with USDC for `feesEach` fees and that allowance to the treasury
 * (the fee is taken from the merchant): mints and approvals sent at once, then waited for.
 */
async function makeMerchants(devnet: Devnet, count: number, feesEach: number): Promise<Merchant[]> {
  const merchants = Array.from({ length: count }, (_, i) => {
    const privateKey = keccak256(toUtf8Bytes(`bench merchant ${i} ${devnet.token}`));
    return { privateKey, address: computeAddress(privateKey) };
  });
  const amount = BigInt(2 * feesEach + 10) * FEE_UNITS;
  const deployer = new Wallet(devnet.accounts.deployer.privateKey, devnet.provider);
  const token = (signer: Wallet) => new Contract(devnet.token, ['function mint(address to, uint256 amount) returns (bool)', 'function approve(address spender, uint256 value) returns (bool)'], signer);
  let nonce = await devnet.provider.getTransactionCount(deployer.address, 'pending');
  const sent = [];
  for (const m of merchants) sent.push(await token(deployer).mint(m.address, amount, { nonce: nonce++, gasLimit: 120_000n }));
  await Promise.all(sent.map((tx) => (tx as { wait(): Promise<unknown> }).wait()));
  await Promise.all(merchants.map((m) => devnet.setEthBalance(m.address, 10n ** 17n)));
  const approvals = await Promise.all(merchants.map((m) => token(new Wallet(m.privateKey, devnet.provider)).approve(devnet.accounts.treasury.address, amount, { nonce: 0, gasLimit: 100_000n })));
  await Promise.all(approvals.map((tx) => (tx as { wait(): Promise<unknown> }).wait()));
  return merchants;
}

// -------------------------------------------------------------------------------------------- settle

interface SettleSample {
  payment: X402Payment;
  startedAt: number;
  endedAt: number;
  ok: boolean;
  /** errorReason, or `http <status>` */
  reason?: string;
  retried: boolean;
}

const PENDING = 'settlement_pending';

/** One settle as a merchant's middleware makes it: POST /settle, and once more on a pending answer with a hash. */
async function settleOnce(post: (url: string, body: unknown) => Promise<Answer>, baseUrl: string, payment: X402Payment): Promise<SettleSample> {
  const body = { x402Version: 2, paymentPayload: payment.paymentPayload, paymentRequirements: payment.requirements };
  const startedAt = epochMs();
  const sample: SettleSample = { payment, startedAt, endedAt: startedAt, ok: false, retried: false };
  try {
    let answer = await post(`${baseUrl}/settle`, body);
    if (answer.status === 200 && answer.body.success !== true && answer.body.errorReason === PENDING && answer.body.transaction) {
      sample.retried = true;
      answer = await post(`${baseUrl}/settle`, body);
    }
    sample.ok = answer.status === 200 && answer.body.success === true;
    if (!sample.ok) sample.reason = typeof answer.body.errorReason === 'string' ? answer.body.errorReason : `http ${answer.status}`;
  } catch (err) {
    sample.reason = `error: ${(err as Error).message.slice(0, 80)}`;
  }
  sample.endedAt = epochMs();
  return sample;
}

/** A closed loop: `inFlight` settles at a time until every payment was sent. */
async function offerAll(baseUrl: string, payments: readonly X402Payment[], inFlight: number, localAddress = '127.0.0.2'): Promise<SettleSample[]> {
  const { post, close } = poster(localAddress);
  const samples: SettleSample[] = [];
  let next = 0;
  try {
    await Promise.all(
      Array.from({ length: Math.max(1, Math.min(inFlight, payments.length)) }, async () => {
        while (next < payments.length) samples.push(await settleOnce(post, baseUrl, payments[next++]));
      }),
    );
  } finally {
    close();
  }
  return samples;
}

/** An open loop: payment i is sent at i ÷ rate seconds, whatever the answers. */
async function offerAtRate(baseUrl: string, payments: readonly X402Payment[], ratePerSecond: number, localAddress: string): Promise<SettleSample[]> {
  const { post, close } = poster(localAddress);
  const started = performance.now();
  const pending: Array<Promise<SettleSample>> = [];
  try {
    for (let i = 0; i < payments.length; i++) {
      const wait = started + (i * 1000) / ratePerSecond - performance.now();
      if (wait >= 1) await sleep(wait);
      pending.push(settleOnce(post, baseUrl, payments[i]));
    }
    return await Promise.all(pending);
  } finally {
    close();
  }
}

const countBy = (values: Array<string | undefined>): Record<string, number> => {
  const counts: Record<string, number> = {};
  for (const v of values) if (v !== undefined) counts[v] = (counts[v] ?? 0) + 1;
  return counts;
};

/** settled/s from the first request to the last success, request → success latency, refusals by reason. */
function tally(samples: readonly SettleSample[]) {
  const ok = samples.filter((s) => s.ok);
  const first = Math.min(...samples.map((s) => s.startedAt));
  const last = Math.max(...ok.map((s) => s.endedAt), first);
  const seconds = (last - first) / 1000;
  return {
    settled: ok.length,
    refused: samples.length - ok.length,
    refusals: countBy(samples.filter((s) => !s.ok).map((s) => s.reason)),
    retried: samples.filter((s) => s.retried).length,
    perSecond: seconds > 0 ? round(ok.length / seconds, 1) : 0,
    seconds: round(seconds, 2),
    latencyMs: roundSummary(summarize(ok.map((s) => s.endedAt - s.startedAt)), 0),
  };
}

function cpuPerSettlement(cpu: CpuUsage, settled: number, own: readonly string[]): Pick<X402Run, 'cpuMsPerSettlement' | 'ownMsPerSettlement' | 'nodeMsPerSettlement'> {
  const ms: Record<string, number> = {};
  for (const [group, cores] of Object.entries(cpu.cores)) {
    const seconds = cpu.cpuSeconds?.[group] ?? cores * cpu.seconds;
    ms[group] = settled > 0 ? round((seconds * 1000) / settled, 2) : NaN;
  }
  return {
    cpuMsPerSettlement: ms,
    ownMsPerSettlement: round(own.reduce((sum, g) => sum + (ms[g] ?? 0), 0), 2),
    nodeMsPerSettlement: ms.anvil ?? NaN,
  };
}

async function statesOf(f: Facilitator, nonces: readonly string[]): Promise<Record<string, number>> {
  const { rows } = await f.db.query<{ state: string; n: string }>('SELECT state::text AS state, count(*) AS n FROM settlements WHERE lower(nonce) = ANY($1) GROUP BY state', [nonces]);
  return Object.fromEntries(rows.map((r) => [r.state, Number(r.n)]));
}

/** Waits until none of these payments' settlements is still open (the answers may precede the last records). */
async function waitForFinalByNonce(f: Facilitator, nonces: readonly string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const { rows } = await f.db.query<{ open: string }>("SELECT count(*) AS open FROM settlements WHERE lower(nonce) = ANY($1) AND state NOT IN ('settled', 'failed')", [nonces]);
    if (Number(rows[0].open) === 0) return;
    await sleep(250);
  }
}

// ------------------------------------------------------------------------------------------ the runs

interface Chain {
  devnet: Devnet;
  settings: X402Settings;
}

async function startOurs(chain: Chain, workers: number): Promise<Facilitator> {
  const relayerKeys = chain.devnet.accounts.relayers.slice(0, chain.settings.relayers).map((r) => r.privateKey);
  return startFacilitator(chain.devnet, { relayerKeys, apiProcesses: chain.settings.apiProcesses, workerEnv: { SETTLEMENT_MODE: 'atomic' }, workerProcesses: workers });
}

/** Ours on the atomic path: a fresh facilitator, a warm-up, then every payment offered at once. */
async function runOurs(chain: Chain, merchants: readonly Merchant[], workers: number): Promise<X402Run> {
  const { devnet, settings } = chain;
  const f = await startOurs(chain, workers);
  const backends = await watchPostgresBackends(adminDatabaseUrl(), [f.database.name]);
  try {
    const base = `${f.api.url}/x402`;
    const warmup = await offerAll(base, await honestPayments(devnet, merchants, settings.warmup), 10);
    if (warmup.some((s) => !s.ok)) log(`ours warm-up: ${warmup.filter((s) => !s.ok).length} of ${warmup.length} refused (${JSON.stringify(tally(warmup).refusals)})`);
    const payments = await honestPayments(devnet, merchants, settings.payments);
    log(`ours (${merchants.length} merchant(s), ${workers} worker(s)): ${payments.length} x402 settles, ${settings.inFlight} in flight`);
    const trees: Record<string, number> = { api: f.api.child.pid!, worker: f.worker.child.pid!, anvil: devnet.pid, bench: process.pid };
    f.extraWorkers.forEach((w, i) => (trees[`worker${i + 2}`] = w.child.pid!));
    const cpuMeter = startCpuMeter({ trees, foreign: backends.foreign });
    const samples = await offerAll(base, payments, settings.inFlight);
    const cpu = cpuMeter.stop();
    const result = tally(samples);
    const nonces = payments.map((p) => p.nonce);
    await waitForFinalByNonce(f, nonces, 60_000);
    return {
      facilitator: 'ours',
      merchants: merchants.length,
      workers,
      payments: payments.length,
      inFlight: settings.inFlight,
      ...result,
      cpu,
      ...cpuPerSettlement(cpu, result.settled, OUR_PROCESSES),
      settlementStates: await statesOf(f, nonces),
      problems: f.problems(),
    };
  } finally {
    await backends.stop();
    await f.stop();
  }
}

/** The reference facilitator (no fee) on the fourth key: a warm-up, then every payment offered at once. */
async function runReference(chain: Chain, merchant: Merchant): Promise<X402Run> {
  const { devnet, settings } = chain;
  const ref = await startReferenceFacilitator({ rpcUrl: devnet.rpcUrl, privateKey: devnet.accounts.relayers[settings.relayers].privateKey, pollingIntervalMs: settings.referencePollingIntervalMs });
  const backends = await watchPostgresBackends(adminDatabaseUrl(), []);
  try {
    await offerAll(ref.url, await honestPayments(devnet, [merchant], settings.warmup), 10);
    const payments = await honestPayments(devnet, [merchant], settings.payments);
    log(`reference: ${payments.length} x402 settles, ${settings.inFlight} in flight`);
    const cpuMeter = startCpuMeter({ trees: { reference: ref.pid, anvil: devnet.pid, bench: process.pid }, foreign: backends.foreign });
    const samples = await offerAll(ref.url, payments, settings.inFlight);
    const cpu = cpuMeter.stop();
    const result = tally(samples);
    return {
      facilitator: 'reference',
      merchants: 1,
      workers: 0,
      payments: payments.length,
      inFlight: settings.inFlight,
      ...result,
      cpu,
      ...cpuPerSettlement(cpu, result.settled, ['reference']),
      problems: ref.problems(),
    };
  } finally {
    await backends.stop();
    await ref.stop();
  }
}

/** Whether each payment was executed on chain (its EIP-3009 nonce used), read from USDC itself. */
async function usedOnChain(devnet: Devnet, payments: readonly X402Payment[]): Promise<boolean[]> {
  const token = new Contract(devnet.token, ['function authorizationState(address authorizer, bytes32 nonce) view returns (bool)'], devnet.provider);
  return Promise.all(payments.map((p) => token.authorizationState(p.payer, p.nonce) as Promise<boolean>));
}

async function honestOutcome(devnet: Devnet, f: Facilitator, samples: readonly SettleSample[]): Promise<HonestOutcome> {
  // a settlement answered pending or failed may still end on chain: wait for its record, then ask the token
  await waitForFinalByNonce(f, samples.map((s) => s.payment.nonce), 60_000);
  const refused = samples.filter((s) => !s.ok);
  const used = await usedOnChain(devnet, refused.map((s) => s.payment));
  const charged = used.filter(Boolean).length;
  return {
    offered: samples.length,
    settled: samples.length - refused.length,
    stopped: refused.length - charged,
    chargedAndRefused: charged,
    refusals: countBy(refused.map((s) => s.reason)),
    latencyMs: roundSummary(summarize(samples.map((s) => s.endedAt - s.startedAt)), 0),
  };
}

interface FloodSettings {
  honest: number;
  honestRatePerSecond: number;
  factor: number;
  capacityPerSecond: number;
  capacitySource: FloodResult['capacitySource'];
}

/**
 * Honest x402 traffic at a steady rate, alone and then beside a flood of strangers' payments at `factor` ×
 * the capacity, for as long as the honest traffic lasts; honest buyers from 127.0.0.2, strangers from 127.0.0.3.
 */
async function runFlood(chain: Chain, merchant: Merchant, s: FloodSettings): Promise<FloodResult> {
  const { devnet, settings } = chain;
  const f = await startOurs(chain, 1);
  const backends = await watchPostgresBackends(adminDatabaseUrl(), [f.database.name]);
  try {
    const base = `${f.api.url}/x402`;
    await offerAll(base, await honestPayments(devnet, [merchant], settings.warmup), 10);
    log(`flood: honest traffic alone, ${s.honest} payments at ${s.honestRatePerSecond}/s`);
    const alone = await offerAtRate(base, await honestPayments(devnet, [merchant], s.honest), s.honestRatePerSecond, '127.0.0.2');
    const unflooded = await honestOutcome(devnet, f, alone);
    const honest = await honestPayments(devnet, [merchant], s.honest);
    const floodRatePerSecond = round(s.factor * s.capacityPerSecond, 1);
    const floodCount = Math.max(1, Math.round((floodRatePerSecond * s.honest) / s.honestRatePerSecond));
    const strangers = strangerPayments(devnet, honest[0], floodCount);
    log(`flood: the same honest traffic beside ${floodCount} strangers' payments at ${floodRatePerSecond}/s (${s.factor}× ${s.capacityPerSecond}/s)`);
    const cpuMeter = startCpuMeter({ trees: { api: f.api.child.pid!, worker: f.worker.child.pid!, anvil: devnet.pid, bench: process.pid }, foreign: backends.foreign });
    const [honestSamples, floodSamples] = await Promise.all([offerAtRate(base, honest, s.honestRatePerSecond, '127.0.0.2'), offerAtRate(base, strangers, floodRatePerSecond, '127.0.0.3')]);
    const cpu = cpuMeter.stop();
    const flooded = await honestOutcome(devnet, f, honestSamples);
    const floodFirst = Math.min(...floodSamples.map((x) => x.startedAt));
    const floodLast = Math.max(...floodSamples.map((x) => x.endedAt));
    return {
      capacityPerSecond: s.capacityPerSecond,
      capacitySource: s.capacitySource,
      factor: s.factor,
      honestRatePerSecond: s.honestRatePerSecond,
      floodRatePerSecond,
      unflooded,
      flooded,
      flood: {
        offered: floodSamples.length,
        answeredPerSecond: round(floodSamples.length / Math.max(1e-3, (floodLast - floodFirst) / 1000), 1),
        succeeded: floodSamples.filter((x) => x.ok).length,
        answers: countBy(floodSamples.map((x) => (x.ok ? 'success' : x.reason))),
        latencyMs: roundSummary(summarize(floodSamples.map((x) => x.endedAt - x.startedAt)), 0),
        ownMsPerStranger: cpuPerSettlement(cpu, floodSamples.length, OUR_PROCESSES).ownMsPerSettlement,
      },
      p50Ratio: round(flooded.latencyMs.p50 / unflooded.latencyMs.p50, 2),
      cpu,
      problems: f.problems(),
    };
  } finally {
    await backends.stop();
    await f.stop();
  }
}

export function x402Settings(): X402Settings {
  return {
    blockTimeSeconds: envNumber('BENCH_X402_BLOCK_TIME', 2),
    payments: envNumber('BENCH_X402_PAYMENTS', 500),
    inFlight: envNumber('BENCH_X402_IN_FLIGHT', 500),
    warmup: envNumber('BENCH_X402_WARMUP', 20),
    relayers: 3,
    apiProcesses: envNumber('BENCH_API_PROCESSES', 2),
    merchants: envNumber('BENCH_X402_MERCHANTS', 100),
    priceUnits: PAID_PRICE_UNITS.toString(),
    feeUnits: FEE_UNITS.toString(),
    referencePollingIntervalMs: envNumber('BENCH_X402_REFERENCE_POLLING_MS', 100),
  };
}

/** The x402 parts asked for, on one anvil with the settings' block time, each run after the other. */
export async function runX402Capacity(parts: ReadonlySet<X402Part>): Promise<X402Results> {
  const settings = x402Settings();
  const honest = envNumber('BENCH_FLOOD_HONEST', 100);
  // payments of ours per run (warm-up included), and how many runs charge the devnet merchant
  const perRun = settings.warmup + settings.payments;
  const merchantRuns = (parts.has('x402') ? 1 : 0) + (parts.has('workers') ? 1 : 0) + (parts.has('flood') ? 1 : 0);
  const fees = merchantRuns * perRun + (parts.has('flood') ? 2 * honest : 0) + 10;
  const devnet = await startChain({
    blockTime: settings.blockTimeSeconds,
    relayerCount: settings.relayers + 1,
    payerSpend: BigInt(fees + 2 * perRun) * PAID_PRICE_UNITS,
    fees,
  });
  const unregisterChain = stopChainOnSignal(devnet);
  const chain: Chain = { devnet, settings };
  const merchant: Merchant = { address: devnet.accounts.merchant.address, privateKey: devnet.accounts.merchant.privateKey };
  const results: X402Results = { settings };
  try {
    log(`x402: setting up the settlement executor (EIP-7702 delegation of the treasury) for ${settings.relayers} relayer keys, ${settings.blockTimeSeconds} s blocks`);
    await setUpDevnetExecutor(devnet, FEE_UNITS, devnet.accounts.relayers.slice(0, settings.relayers));
    if (parts.has('x402')) {
      results.ours = await runOurs(chain, [merchant], 1);
      results.reference = await runReference(chain, merchant);
      results.ratio = results.reference.perSecond > 0 ? round(results.ours.perSecond / results.reference.perSecond, 2) : undefined;
    }
    if (parts.has('merchants')) {
      log(`x402: funding ${settings.merchants} merchants (USDC for their fees, allowance to the treasury)`);
      const merchants = await makeMerchants(devnet, settings.merchants, Math.ceil(perRun / settings.merchants) + 1);
      results.hundredMerchants = await runOurs(chain, merchants, 1);
    }
    if (parts.has('workers')) results.twoWorkers = await runOurs(chain, [merchant], 2);
    if (parts.has('flood')) {
      const fixed = process.env.BENCH_FLOOD_CAPACITY;
      const capacityPerSecond = fixed ? envNumber('BENCH_FLOOD_CAPACITY', 1) : (results.ours?.perSecond ?? 0);
      if (!(capacityPerSecond > 0)) throw new Error('the flood is a multiple of our capacity: run the x402 part with it, or set BENCH_FLOOD_CAPACITY');
      results.flood = await runFlood(chain, merchant, {
        honest,
        honestRatePerSecond: envNumber('BENCH_FLOOD_HONEST_RATE', Math.max(1, Math.round(capacityPerSecond / 2))),
        factor: envNumber('BENCH_FLOOD_FACTOR', 10),
        capacityPerSecond,
        capacitySource: fixed ? 'BENCH_FLOOD_CAPACITY' : 'measured',
      });
    }
    return results;
  } finally {
    await devnet.stop();
    unregisterChain();
  }
}
