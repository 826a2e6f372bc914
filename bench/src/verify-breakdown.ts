// `node bench/dist/verify-breakdown.js`: where the cost of one verification goes. The facilitator's own
// compiled packages are driven in-process, one stage at a time, so each figure is the cost of that stage
// alone: CPU per operation in Node, in Postgres and in anvil, and the rate one process reaches with it.
// It explains the verify benchmark; it is not a target itself.
import http from 'node:http';
import { createProvider, fiatTokenInterface, JsonRpcBatchClient, RpcChainReader } from '@facilitator/evm-chain';
import { startDevnet, type Devnet } from '@facilitator/evm-devnet';
import { loadConfig } from '@facilitator/config';
import { domainSeparator, IdPrefix, KECCAK_BACKEND, newId, signatureRecovery } from '@facilitator/core';
import { recoverAuthorizationSigner } from '@facilitator/payment-mechanisms';
import { createPgPool, createPrismaClient, SettlementRequestStore, VerificationRepository, type PrismaClient } from '@facilitator/db';
import { validateVerifyFormA } from '@facilitator/schemas';
import { EnabledNetworks, paymentFromFormA, verificationRecordOf, VerificationService, type ChainReader, type Payment } from '@facilitator/verification';
import { loadRun } from './autocannon-run';
import { machineInfo, versions, type MachineInfo } from './machine';
import { PaymentFactory } from './payments';
import { startCpuMeter, waitForQuietMachine, type CpuUsage } from './proc';
import { envNumber, interferencePolicy, log, runBenchmarkMain, table } from './results';
import { cleanupOnSignal, createDatabase, deleteRedisKeys, stackEnv, startApi } from './stack';
import { epochMs, round, summarize } from './stats';

export interface StageCost {
  stage: string;
  /** concurrent operations in flight (1 for synchronous stages) */
  concurrency: number;
  perSecond: number;
  p50Ms?: number;
  /** CPU per operation, microseconds, by process group */
  cpuUsPerOp: { node: number; postgres?: number; anvil?: number };
}

export interface BreakdownResults {
  benchmark: 'verify-breakdown';
  startedAt: string;
  machine: MachineInfo;
  versions?: Record<string, string>;
  stages: StageCost[];
  /** POST /v1/verify with an empty JSON object (400 at schema validation) on the API cluster: the HTTP shell alone */
  httpShell: { apiProcesses: number; connections: number; answersPerSecond: number; apiCpuUsPerRequest: number; loadGeneratorCpuUsPerRequest: number };
}

/** A synchronous stage: run it `count` times on one core. */
function measureSync(stage: string, count: number, fn: (i: number) => unknown): StageCost {
  for (let i = 0; i < Math.min(count, 500); i++) fn(i); // let V8 optimize first
  const cpu0 = process.cpuUsage();
  const t0 = epochMs();
  for (let i = 0; i < count; i++) fn(i);
  const ms = epochMs() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { stage, concurrency: 1, perSecond: round((count / ms) * 1000, 0), cpuUsPerOp: { node: round((cpu.user + cpu.system) / count, 1) } };
}

/**
 * An asynchronous stage with `concurrency` operations in flight for `seconds`. Node CPU comes from
 * process.cpuUsage (this process only); Postgres and anvil CPU from /proc.
 */
async function measureAsync(
  stage: string,
  devnet: Devnet,
  concurrency: number,
  seconds: number,
  op: (i: number) => Promise<unknown>,
  /** items one operation handles (a batch); rates and CPU are reported per item */
  itemsPerOp = 1,
): Promise<StageCost> {
  let next = 0;
  const run = async (untilMs: number, latencies?: number[]) => {
    const loop = async () => {
      while (epochMs() < untilMs) {
        const t = epochMs();
        await op(next++);
        latencies?.push(epochMs() - t);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, loop));
  };
  await run(epochMs() + 500); // warm-up: connections opened, code optimized
  const policy = interferencePolicy();
  let latencies: number[];
  let measured: { cpu: NodeJS.CpuUsage; usage: CpuUsage; elapsed: number; ops: number };
  for (let attempt = 1; ; attempt++) {
    latencies = [];
    const meter = startCpuMeter({ trees: { anvil: devnet.pid, bench: process.pid } });
    const cpu0 = process.cpuUsage();
    const start = next;
    const t0 = epochMs();
    await run(t0 + seconds * 1000, latencies);
    measured = { elapsed: (epochMs() - t0) / 1000, cpu: process.cpuUsage(cpu0), usage: meter.stop(), ops: (next - start) * itemsPerOp };
    if ((measured.usage.cores.other ?? 0) <= policy.maxOtherCores || attempt > policy.retries) break;
    await waitForQuietMachine(); // disturbed by other work on the machine: measure the stage again
  }
  const { cpu, usage, elapsed, ops } = measured;
  const perOp = (cores: number | undefined) => (cores ? round(((cores * usage.seconds) / ops) * 1e6, 1) : 0);
  return {
    stage,
    concurrency,
    perSecond: round(ops / elapsed, 0),
    p50Ms: round(summarize(latencies).p50, 2),
    cpuUsPerOp: { node: round((cpu.user + cpu.system) / ops, 1), postgres: perOp(usage.cores.postgres), anvil: perOp(usage.cores.anvil) },
  };
}

/** One JSON-RPC POST over a keep-alive agent, with nothing but Node's http module. */
function rawCall(url: string, body: string, agent: http.Agent): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(body);
  });
}

/**
 * The row VerificationService stores for a verified payment: its own record function, without the columns
 * a verified row leaves empty (Prisma's create takes no plain null for a JSON column).
 */
function prismaRecordOf(payment: Payment) {
  const { payload, request, metadata, failureDetails: _none, ...columns } = verificationRecordOf(payment);
  return { ...columns, payload: payload ?? undefined, request: request ?? undefined, metadata: metadata ?? undefined };
}

// network_name named, as the service's insert does (a row without it is an older process's, completed by a trigger)
const RAW_INSERT = `INSERT INTO verifications (id, status, protocol_version, surface, chain_id, network, token_address, payer, merchant,
  amount, expected_amount, nonce, valid_after, valid_before, signature, request, network_name, created_at, updated_at)
  VALUES ($1, 'verified', $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, now(), now())`;
const RAW_INSERT_MANY = `INSERT INTO verifications (id, protocol_version, surface, chain_id, network, token_address, payer, merchant,
  amount, expected_amount, nonce, valid_after, valid_before, signature, request, network_name, status, created_at, updated_at) VALUES `;
const RAW_NONCE_USE = `SELECT id FROM settlements WHERE chain_id = $1 AND nonce_space = $2 AND payer = $3 AND nonce = $4
  AND (state IN ('fee_collected', 'executing', 'settled') OR merchant_paid) LIMIT 1`;

export async function runVerifyBreakdown(): Promise<BreakdownResults> {
  const seconds = envNumber('BENCH_BREAKDOWN_SECONDS', 3);
  const concurrency = envNumber('BENCH_BREAKDOWN_CONCURRENCY', 32);
  await waitForQuietMachine();
  const startedAt = new Date().toISOString();
  const [devnet, db] = await Promise.all([startDevnet(), createDatabase()]);
  const env = stackEnv(devnet, db.url, { API_PROCESSES: '2' });
  const config = loadConfig(env);
  const network = config.networks[0];
  // wired as apps/api/src/build-api.ts does: ethers for the rare calls, the lean batch client for the hot one
  const provider = createProvider(network.rpcUrl, network.chainId);
  const rpc = new JsonRpcBatchClient(network.rpcUrl);
  const chain = new RpcChainReader([{ chainId: network.chainId, provider, rpc, tokenAddress: network.tokenAddress }]);
  // the API's own pool sizes (pg's default, 10) so the DB stages see the same connection limit
  const prisma: PrismaClient = createPrismaClient(db.url);
  const pool = createPgPool(db.url);
  let api: Awaited<ReturnType<typeof startApi>> | undefined;
  const teardown = async () => {
    await api?.stop();
    provider.destroy();
    rpc.destroy();
    await pool.end();
    await prisma.$disconnect();
    await devnet.stop();
    await Promise.all([db.drop(), deleteRedisKeys(env.QUEUE_PREFIX)]);
  };
  const unregister = cleanupOnSignal(teardown);
  try {
    const factory = new PaymentFactory(devnet);
    const networks = new EnabledNetworks(config.networks);
    const count = 20_000;
    log(`breakdown: ${count} payments for the synchronous stages`);
    const bodies = Array.from({ length: count }, () => JSON.stringify(factory.formA(factory.make())));
    const parsed = bodies.map((b) => JSON.parse(b) as Record<string, unknown>);
    const payments = parsed.map((p) => paymentFromFormA(validateVerifyFormA(p), networks, 'v1'));
    const separator = domainSeparator(devnet.eip712Domain);
    // v1 payments are EIP-3009's, whose signature is recoverable offline
    const signedDigest = (p: (typeof payments)[number]) => p.mechanism.signature!.signedDigest(p.payload, separator);
    const digests = payments.map(signedDigest);

    const stages: StageCost[] = [
      measureSync('JSON.parse of the request body', count, (i) => JSON.parse(bodies[i])),
      measureSync('schema validation (ajv, Form A)', count, (i) => validateVerifyFormA(parsed[i])),
      measureSync('normalize to Payment', count, (i) => paymentFromFormA(validateVerifyFormA(parsed[i]), networks, 'v1')),
      measureSync(`EIP-712 digest (2 keccak, ${KECCAK_BACKEND})`, count, (i) => signedDigest(payments[i])),
      measureSync(`signature recovery (${signatureRecovery.backend} + keccak to address)`, count, (i) => recoverAuthorizationSigner(digests[i], payments[i].signature)),
      measureSync('JSON.stringify of the answer-sized object', count, (i) => JSON.stringify({ isValid: true, details: parsed[i] })),
    ];

    // Pre-made payments, reused round-robin: verification consumes nothing, and every INSERT gets a new id,
    // so reuse changes no cost while keeping signing out of the measured CPU.
    let fresh = 0;
    const nextPayment = () => payments[fresh++ % count];
    const verifications = new VerificationRepository(pool);
    const settlements = new SettlementRequestStore(prisma, pool);
    const p0 = payments[0];
    const a0 = { from: p0.terms.payer, nonce: p0.terms.nonce.value };
    log('breakdown: database and RPC stages');
    stages.push(
      await measureAsync('INSERT verification via Prisma (prisma.verification.create)', devnet, concurrency, seconds, () =>
        prisma.verification.create({ data: prismaRecordOf(payments[fresh++ % count]) }),
      ),
    );
    stages.push(
      await measureAsync('same INSERT via pg, prepared statement', devnet, concurrency, seconds, () => {
        const r = verificationRecordOf(payments[fresh++ % count]);
        // a new id is enough: nothing in the table is unique on the payment itself
        return pool.query({
          name: 'insert-verification',
          text: RAW_INSERT,
          values: [newId(IdPrefix.Verification), r.protocolVersion, r.surface, r.chainId, r.network, r.tokenAddress, r.payer, r.merchant, r.amount, r.expectedAmount, r.nonce, r.validAfter, r.validBefore, r.signature, JSON.stringify(r.request), r.networkName],
        });
      }),
    );
    const BATCH = 32;
    stages.push(
      await measureAsync(
        `same INSERT via pg, ${BATCH} rows per statement (per row)`,
        devnet,
        Math.max(1, Math.round(concurrency / BATCH)) * 2,
        seconds,
        () => {
          const values: unknown[] = [];
          const tuples: string[] = [];
          for (let b = 0; b < BATCH; b++) {
            const r = verificationRecordOf(payments[fresh++ % count]);
            const o = values.length;
            tuples.push(`(${Array.from({ length: 16 }, (_, k) => `$${o + k + 1}`).join(', ')}, 'verified', now(), now())`);
            values.push(newId(IdPrefix.Verification), r.protocolVersion, r.surface, r.chainId, r.network, r.tokenAddress, r.payer, r.merchant, r.amount, r.expectedAmount, r.nonce, r.validAfter, r.validBefore, r.signature, JSON.stringify(r.request), r.networkName);
          }
          return pool.query({ name: `insert-verifications-${BATCH}`, text: RAW_INSERT_MANY + tuples.join(', '), values });
        },
        BATCH,
      ),
    );
    stages.push(
      await measureAsync('INSERT + nonce-use check, batched per event-loop turn, via pg (VerificationRepository.createCheckingNonce)', devnet, concurrency, seconds, () => {
        const p = payments[fresh++ % count];
        return verifications.createCheckingNonce(verificationRecordOf(p));
      }),
    );
    stages.push(
      await measureAsync('nonce-use SELECT via Prisma (findNonceUse)', devnet, concurrency, seconds, () =>
        settlements.findNonceUse({ chainId: network.chainId, nonceSpace: network.tokenAddress, payer: a0.from, nonce: a0.nonce }),
      ),
    );
    stages.push(
      await measureAsync('same SELECT via pg, prepared statement', devnet, concurrency, seconds, () =>
        pool.query({ name: 'nonce-use', text: RAW_NONCE_USE, values: [network.chainId, network.tokenAddress, a0.from, a0.nonce] }),
      ),
    );
    const authorizationStateCall = { to: network.tokenAddress, data: fiatTokenInterface.encodeFunctionData('authorizationState', [a0.from, a0.nonce]) };
    stages.push(
      await measureAsync('authorizationState eth_call via an ethers provider (default batching)', devnet, concurrency, seconds, () =>
        provider.call(authorizationStateCall),
      ),
    );
    stages.push(
      await measureAsync('authorizationState via RpcChainReader + JsonRpcBatchClient (as in the API)', devnet, concurrency, seconds, () =>
        chain.isAuthorizationUsed(network.chainId, a0.from, a0.nonce),
      ),
    );
    const callBody = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'eth_call',
      params: [{ to: network.tokenAddress, data: '0xe94a0102' + a0.from.slice(2).padStart(64, '0') + a0.nonce.slice(2) }, 'latest'],
    });
    stages.push(
      await measureAsync('same eth_call via fetch (undici), hand-encoded', devnet, concurrency, seconds, async () => {
        const response = await fetch(network.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: callBody });
        await response.json();
      }),
    );
    const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
    stages.push(
      await measureAsync('same eth_call via node:http keep-alive agent', devnet, concurrency, seconds, () => rawCall(network.rpcUrl, callBody, agent)),
    );
    const batchBody = JSON.stringify(Array.from({ length: BATCH }, (_, id) => ({ ...JSON.parse(callBody), id })));
    stages.push(
      await measureAsync(`same eth_call, JSON-RPC batch of ${BATCH} (per call)`, devnet, 2, seconds, () => rawCall(network.rpcUrl, batchBody, agent), BATCH),
    );
    agent.destroy();

    // The whole verification service in-process, then with the chain, the database, or both replaced by stubs.
    const noChain: ChainReader = {
      domainSeparator: async () => separator,
      isAuthorizationUsed: async () => false,
      isValidContractSignature: async () => undefined,
      readContract: async () => '0x' + '0'.repeat(64),
    };
    const noDb = {
      verifications: {
        create: async (d: object) => ({ ...d, createdAt: new Date(), updatedAt: new Date() }),
        createCheckingNonce: async (d: object) => ({ record: { ...d, createdAt: new Date(), updatedAt: new Date() }, usedBy: null, heldBy: null }),
      } as unknown as VerificationRepository,
      settlements: { findNonceUse: async () => null } as unknown as SettlementRequestStore,
    };
    const service = (chainReader: ChainReader, repos: { verifications: VerificationRepository; settlements: SettlementRequestStore }) =>
      new VerificationService({ chain: chainReader, ...repos, treasuryAddress: config.treasuryAddress, expiryMarginSeconds: config.authorizationExpiryMarginSeconds, minPaymentAmount: config.abuse.minPaymentAmount });
    const variants: Array<[string, VerificationService]> = [
      ['VerificationService.verify: database + RPC (as in the API)', service(chain, { verifications, settlements })],
      ['VerificationService.verify: database, chain stubbed', service(noChain, { verifications, settlements })],
      ['VerificationService.verify: RPC, database stubbed', service(chain, noDb)],
      ['VerificationService.verify: chain and database stubbed (pure CPU)', service(noChain, noDb)],
    ];
    for (const [stage, svc] of variants) {
      stages.push(
        await measureAsync(stage, devnet, concurrency, seconds, async () => {
          const { failure } = await svc.verify(nextPayment());
          if (failure) throw new Error(`breakdown payment failed verification: ${failure.message}`);
        }),
      );
    }

    log('breakdown: HTTP shell (empty body, 400 at validation) on the API cluster');
    const shellApi = await startApi(env);
    api = shellApi;
    let shell: BreakdownResults['httpShell'];
    try {
      await loadRun({ url: shellApi.url, path: '/v1/verify', connections: 64, seconds: 1, nextBody: () => '{}' });
      const meter = startCpuMeter({ trees: { api: shellApi.child.pid!, bench: process.pid } });
      const run = await loadRun({ url: shellApi.url, path: '/v1/verify', connections: 64, seconds: Math.max(3, seconds), nextBody: () => '{}' });
      const usage = meter.stop();
      const answers = run.ok + Object.values(run.otherStatuses).reduce((a, b) => a + b, 0);
      shell = {
        apiProcesses: 2,
        connections: 64,
        answersPerSecond: round(answers / run.durationSeconds, 0),
        apiCpuUsPerRequest: round((((usage.cores.api ?? 0) * usage.seconds) / answers) * 1e6, 1),
        loadGeneratorCpuUsPerRequest: round((((usage.cores.bench ?? 0) * usage.seconds) / answers) * 1e6, 1),
      };
    } finally {
      await shellApi.stop();
      api = undefined;
    }
    return { benchmark: 'verify-breakdown', startedAt, machine: machineInfo(), versions: await versions(), stages, httpShell: shell };
  } finally {
    unregister();
    await teardown();
  }
}

export function printBreakdown(r: BreakdownResults): void {
  const rows: Array<Array<string | number>> = [['stage', 'in flight', 'ops/s (one process)', 'p50 ms', 'CPU µs/op node', 'postgres', 'anvil']];
  for (const s of r.stages) {
    rows.push([s.stage, s.concurrency, s.perSecond, s.p50Ms ?? '', s.cpuUsPerOp.node, s.cpuUsPerOp.postgres ?? '', s.cpuUsPerOp.anvil ?? '']);
  }
  process.stdout.write(`\nverify cost breakdown — ${r.machine.cpuModel}, ${r.machine.cores} cores\n${table(rows)}\n`);
  const h = r.httpShell;
  process.stdout.write(
    `HTTP shell (${h.apiProcesses} API processes, ${h.connections} connections, 400 answers): ${h.answersPerSecond}/s, ` +
      `API CPU ${h.apiCpuUsPerRequest} µs/request, load generator ${h.loadGeneratorCpuUsPerRequest} µs/request\n`,
  );
}

if (require.main === module) runBenchmarkMain('verify-breakdown', runVerifyBreakdown, printBreakdown);
