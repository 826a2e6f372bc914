import { Worker } from 'bullmq';
import type { WorkerProcessConfig } from '@facilitator/config';
import { evmChainFamily } from '@facilitator/evm-chain';
import { LocalKeyTransactionProvider, type TransactionProvider } from '@facilitator/evm-sending';
import { OpenZeppelinRelayerProvider } from '@facilitator/relayer-openzeppelin';
import {
  ChainTransactionRepository,
  createPgPool,
  SettlementBatchRepository,
  PaymentIdentifierRepository,
  WalletDeploymentRepository,
  createPrismaClient,
  IdempotencyRepository,
  MerchantRepository,
  SettlementStore,
  SettlementRetention,
  SettlementPages,
  SettlementAccountingStore,
  SettlementFinalityStore,
  VerificationRepository,
  WebhookEventRepository,
  DiscoveryRepository,
} from '@facilitator/db';
import { DiscoveryIndexer } from '@facilitator/discovery';
import type { Logger } from '@facilitator/logging';
import { createMetrics, type Metrics } from '@facilitator/metrics';
import { JobName, openQueueStore, queueStoreTargetOf, scheduleMaintenance } from '@facilitator/queue';
import { deploymentBinding, MerchantService, SecretBox } from '@facilitator/merchants';
import { hmacAdmission, treasuryAdmission, type SettlementAdmission, ExecutorBatches, FinalityWatcher, OutcomeWaits, storedItemCheck, FundedRelayers, RpcWalletDeploymentGuard, SettlementMachine, type SettlementNetwork } from '@facilitator/settlement';
import { HostResolver, ReceiverGate, WEBHOOK_TIMEOUT_MS, WebhookDelivery, WebhookEventMac, WebhookOutbox } from '@facilitator/webhooks';
import { assertCatalogComplete, type JobCatalog } from './job-catalog';
import { maintenanceHandler } from './maintenance-handler';
import { settlementHandler } from './settlement-handler';
import { Sweeper } from './sweeper';
import { webhookHandler } from './webhook-handler';
import { relayerFunds, WaitingSettlements } from './chain-waits';
import { TreasuryRelayerWatch } from './treasury-relayer-watch';
import { finalityChain } from './finality-chain';
import { SettlementPaths } from './settlement-paths';
import { keyBalances, recordTransition, serveWorkerMetrics } from './worker-metrics';
import type { WorkerKeys } from './worker-keys';

export interface WorkerRuntime {
  workers: Worker[];
  metrics: Metrics;
  /** Stops taking jobs, waits up to the shutdown timeout for running ones, then releases everything. */
  close(): Promise<void>;
}

/** The composition root of the worker process. */
export function buildWorker(config: WorkerProcessConfig, logger: Logger, keys: WorkerKeys): WorkerRuntime {
  // the hot paths (settlements, webhook deliveries) run on `pool` (plain pg); Prisma serves the cold ones
  const pool = createPgPool(config.databaseUrl, Math.min(50, config.worker.settlementConcurrency + 10));
  const prisma = createPrismaClient(config.databaseUrl, { poolMax: 5 });
  // Redis or, with QUEUE_BACKEND=postgres, DATABASE_URL's database; a PostgreSQL worker's pool serves its concurrency
  const queueStore = openQueueStore(queueStoreTargetOf(config, Math.min(20, config.worker.settlementConcurrency + 2)));
  queueStore.redis?.on('error', (err) => logger.warn('redis connection error', { err: err.message }));
  const queues = queueStore.openQueues((err) => logger.warn('queue connection error', { err: err.message }));
  // every network opened by its family (EVM: every read fails over between the network's endpoints; every
  // signed transaction goes to all healthy ones)
  const opened = new Map(config.networks.map((n) => [n.chainId, evmChainFamily.open(n)]));
  const pools = [...opened.values()].map((n) => n.endpoints);
  const providers = new Map([...opened].map(([chainId, n]) => [chainId, n.provider]));
  // the relayer server is asked again every EXECUTOR_RECHECK_MS for a relayer signing as the treasury: while
  // one exists that the operator did not allow, nothing new is sent through it (issue 40)
  const treasuryRelayerWatch =
    keys.kind === 'openzeppelin-relayer' && config.transactionProvider.kind === 'openzeppelin-relayer' && !config.transactionProvider.allowTreasury
      ? new TreasuryRelayerWatch(keys.client, config.treasuryAddress, logger)
      : undefined;
  treasuryRelayerWatch?.start(config.worker.executorRecheckMs);
  const sendingProvider: TransactionProvider =
    keys.kind === 'openzeppelin-relayer'
      ? new OpenZeppelinRelayerProvider(pool, keys.client, keys.bindings, providers, {
          logger,
          perNetworkMaxFeePerGasCap: new Map(config.networks.map((n) => [n.chainId, n.maxFeePerGas])),
        })
      : new LocalKeyTransactionProvider(
          pool,
          providers,
          // the treasury's key only when given (the sequential path); the atomic path signs with relayer keys alone
          [...new Set([...(keys.treasury ? [keys.treasury] : []), ...keys.relayers])],
          {
            logger,
            perNetwork: new Map(config.networks.map((n) => [n.chainId, { maxFeePerGasCap: n.maxFeePerGas, replaceAfterMs: n.replaceAfterMs }])),
          },
        );
  const transactions = treasuryRelayerWatch ? treasuryRelayerWatch.guard(sendingProvider) : sendingProvider;
  const treasurySigns = keys.kind === 'openzeppelin-relayer' ? keys.treasurySigns : keys.treasury !== undefined;
  const networks = new Map<number, SettlementNetwork>(
    config.networks.map((n) => {
      const { usdc } = opened.get(n.chainId)!;
      return [
        n.chainId,
        {
          family: 'evm',
          chainId: n.chainId,
          caip2: n.caip2,
          rpcUrl: n.rpcUrl,
          confirmations: n.confirmations,
          usdc,
          gasCaps: n.gasCaps,
          walletFactories: n.walletFactories,
          walletImplementations: n.walletImplementations,
          // the worker checks an ordinary-key payer's signature itself (the pre-flight's estimate is then not needed)
          tokenDomainSeparator: () => usdc.domainSeparator(n.chainId, { name: n.eip712Name, version: n.eip712Version }),
        },
      ];
    }),
  );

  // which networks settle in one transaction: decided by the treasury's delegation, checked before any settlement runs
  const paths = new SettlementPaths(config, { relayers: keys.relayerAddresses, treasurySigns }, networks, providers, logger);
  // the settlements table, by reader: the machine's store (and the atomic path's check of a stored item)
  const settlements = new SettlementStore(prisma, pool);
  const settlementRetention = new SettlementRetention(prisma, pool);
  const settlementPages = new SettlementPages(prisma, pool);
  const waiting = new WaitingSettlements();
  const metrics = createMetrics('worker', {
    waitingSettlements: () => waiting.countsByReason(),
    // read at scrape time, once both exist
    awaitedTransactions: () => outcomes.awaited,
    needingAttention: () => settlementPages.countNeedingAttention(),
    queues: [queues.settlement, queues.webhook],
    balances: keyBalances(config, keys.relayerAddresses, new Map([...networks].map(([chainId, n]) => [chainId, n.usdc]))),
    rpcEndpoints: () => pools.flatMap((p) => p.snapshot()),
  });
  const webhookEvents = new WebhookEventRepository(prisma, pool);
  // each event row carries a MAC keyed from WEBHOOK_SECRET; the delivery below checks it before signing (issue 40)
  const eventMac = new WebhookEventMac(config.webhookSecret);
  const outbox = new WebhookOutbox(webhookEvents, queues, eventMac);
  // one rotation over the relayer keys for the sequential sends and the atomic batches alike
  const relayers = new FundedRelayers(keys.relayerAddresses, relayerFunds(config, providers, metrics));
  const batches = new SettlementBatchRepository(pool);
  const walletDeployments = new WalletDeploymentRepository(pool);
  const chainTransactions = new ChainTransactionRepository(pool);
  const merchants = new MerchantService({
    repository: new MerchantRepository(pool),
    secretBox: new SecretBox(config.webhookSecret),
    graceSeconds: config.webhookSecretGraceSeconds,
    feeAmount: config.feeAmount,
    binding: deploymentBinding(config.networks.map((n) => n.chainId), config.treasuryAddress),
  });
  // one wait per transaction in this process, for the machine's steps and the atomic batches alike
  const outcomes = new OutcomeWaits(transactions, { inSlotWaitMs: config.worker.settlementInSlotWaitMs });
  const atomic = new ExecutorBatches({
    batches,
    transactions,
    outcomes,
    treasury: config.treasuryAddress,
    nextRelayer: (chainId) => relayers.next(chainId, paths.batchRelayers(chainId)),
    // a batch read back from the database is sent only as this worker would have formed it (issue 40)
    isRelayer: (chainId, address) => paths.batchRelayers(chainId).some((r) => r.toLowerCase() === address.toLowerCase()),
    itemProblem: storedItemCheck({ settlements, networks, treasury: config.treasuryAddress.toLowerCase() }),
    gasBudget: (chainId) => config.networks.find((n) => n.chainId === chainId)!.batchGasBudget,
    windowMs: config.worker.batchWindowMs,
    // one batch in the making per relayer key: their nonces are independent
    parallel: keys.relayerAddresses.length,
    // each batch is estimated before it is stored: items that would fail it are left out, not stored. It runs
    // payers' code, so as the batch is sent: within its gas, with the fee fields of the market (issue 40, 4)
    estimate: async (chainId, tx, gasCap) =>
      networks.get(chainId)!.usdc.estimate(tx.from, tx.data, tx.to, { gasLimit: gasCap, maxFeePerGasCap: (await transactions.networkFee(chainId)).maxFeePerGasCap }),
  });
  const machine: SettlementMachine = new SettlementMachine({
    settlements,
    networks,
    transactions,
    outcomes,
    chainRecheckMs: config.worker.settlementChainRecheckMs,
    treasury: config.treasuryAddress,
    treasurySigns,
    // the treasury's key (or the relayer server's API key) seals each settlement this worker's pre-flight admitted;
    // the sequential fee is sent only for a sealed one (issue 40: a database writer forges no fee)
    admission: admissionOf(keys),
    paths,
    relayers,
    executorFee: config.feeAmount,
    expiryMarginSeconds: Math.max(1, Math.floor(config.authorizationExpiryMarginSeconds / 2)),
    outbox,
    merchantPause: { afterReverts: config.abuse.merchantPauseAfterReverts, windowMs: config.abuse.merchantPauseWindowMs },
    walletDeployments: new RpcWalletDeploymentGuard(new Map([...networks].map(([chainId, n]) => [chainId, n.usdc])), walletDeployments, config.walletDeployLimits),
    // who pays for failures, the merchant's minimum again before the fee, the payer's value in flight
    accounting: {
      pause: {
        payerAfterFailures: config.abuse.payerPauseAfterFailures,
        merchantAfterFailures: config.abuse.merchantPauseAfterFailures,
        windowMs: config.abuse.failurePauseWindowMs,
      },
      counts: new SettlementAccountingStore(prisma, pool),
      minimumFor: async (merchant) => (await merchants.minimumFor(merchant)) ?? config.abuse.configuredMinPaymentAmount,
      contractPayerMaxInFlight: config.abuse.contractPayerMaxInFlight,
      sequentialContractPayers: config.abuse.sequentialContractPayers,
      unfinishedTransactionsOf: (chainId, from) => chainTransactions.countUnfinishedFrom(chainId, from),
    },
    atomic,
    onTransition: (t) => {
      logger.info('settlement transition', { settlementId: t.settlementId, from: t.from, to: t.to, note: t.note });
      waiting.movedOn(t.settlementId);
      recordTransition(metrics, t);
    },
    onWaiting: (settlementId, reason) => {
      waiting.waiting(settlementId, reason);
      metrics.settlementWaits.inc({ reason });
    },
  });
  const delivery = new WebhookDelivery({
    events: webhookEvents,
    eventMac,
    onUnauthenticated: (eventId) =>
      logger.error('webhook event refused: its row has no valid MAC (not stored by a process holding WEBHOOK_SECRET), nothing signed or sent', { eventId }),
    // each event is signed with its merchant's own secret(s) as they are at delivery, created on first use
    signingSecrets: (merchant) => merchants.signingSecrets(merchant),
    allowPrivate: config.webhookAllowPrivate,
    allowedPorts: config.webhookAllowedPorts,
    // per process: a receiver holds at most this many of this worker's delivery slots, and a failing one none
    gate: new ReceiverGate({
      maxPerReceiver: config.worker.webhookReceiverConcurrency,
      breakerFailures: config.worker.webhookBreakerFailures,
      breakerCooldownMs: config.worker.webhookBreakerCooldownMs,
      maxCooldownMs: Math.max(config.worker.webhookBreakerCooldownMs, 10 * 60_000),
      probeMs: WEBHOOK_TIMEOUT_MS,
    }),
    // a delivery held by an open breaker still gets an attempt at least as often as the schedule's longest gap
    maxHoldMs: Math.max(...config.webhookRetryDelaysMs),
    resolver: new HostResolver(config.webhookDns),
    onAttemptError: (eventId, error) => logger.info('webhook attempt error', { eventId, error }),
  });

  // the x402 bazaar catalog (issue 45): lists a declared resource once its payment settled, off the settlement's path
  const discoveryRepository = new DiscoveryRepository(pool);
  const discoveryHosts = new HostResolver(config.webhookDns);
  const discoveryIndexer = new DiscoveryIndexer({
    repository: discoveryRepository,
    maxResourcesPerMerchant: config.discovery.maxResourcesPerPayTo,
    allowPrivate: config.discovery.allowPrivateUrls,
    resolveHost: (host) => discoveryHosts.resolve(host),
    onError: (err) => logger.warn('discovery indexing failed; retried on the next pass', { err }),
  });

  const catalog: JobCatalog = {
    settlement: settlementHandler({
      machine,
      ready: paths.firstCheck,
      logger,
      concurrency: config.worker.settlementConcurrency,
      maxAttempts: config.worker.settlementAttempts,
    }),
    maintenance: maintenanceHandler({
      verifications: new VerificationRepository(pool),
      settlements: settlementRetention,
      batches,
      merchants: new MerchantRepository(pool),
      idempotencyKeys: new IdempotencyRepository(prisma),
      webhookEvents,
      walletDeployments,
      paymentIdentifiers: new PaymentIdentifierRepository(pool),
      discovery: { repository: discoveryRepository, retentionMs: config.discovery.retentionMs },
      walletDeployWindowMs: config.walletDeployLimits.windowMs,
      retention: config.retention,
      logger,
      sweeper: new Sweeper({ settlements: settlementRetention, queues, webhookEvents, outbox, logger, staleAfterMs: config.worker.sweepStaleAfterMs }),
      finality: new FinalityWatcher({
        transactions: chainTransactions,
        settlements: new SettlementFinalityStore(prisma, pool),
        batches,
        chain: finalityChain(providers, new Map([...networks].map(([chainId, n]) => [chainId, n.usdc]))),
        treasury: config.treasuryAddress,
        outbox,
        depths: new Map(config.networks.map((n) => [n.chainId, n.finalityDepth])),
        logger,
      }),
    }),
    webhook: webhookHandler(delivery, logger, config.worker.webhookConcurrency, config.webhookRetryDelaysMs, metrics),
  };
  const served = config.worker.queues;
  assertCatalogComplete(catalog, served);

  const workers = served.map((queue) => {
    const handler = catalog[queue];
    const worker = queueStore.openWorker(queue, (job, token) => handler.process(job, token), {
      concurrency: handler.concurrency,
      lockDuration: config.worker.lockDurationMs,
      stalledInterval: config.worker.stalledIntervalMs,
      // steps are idempotent: a job taken back after a crash is simply resumed, however often. The
      // PostgreSQL backend passes this as an int4 parameter, so "however often" is written as 10^6
      maxStalledCount: 1_000_000,
      settings: { backoffStrategy: (attemptsMade: number) => handler.backoff?.(attemptsMade) ?? 1000 },
    });
    worker.on('error', (err) => logger.error('worker error', { queue, err: err.message }));
    worker.on('failed', (job, err) => {
      if (job && job.attemptsMade >= (job.opts.attempts ?? 1)) logger.warn('job failed for good', { queue, jobId: job.id, err: err.message });
    });
    return worker;
  });

  if (served.includes('settlement')) discoveryIndexer.start();

  if (served.includes('maintenance')) {
    // upserted by every worker that serves the queue; BullMQ keeps one scheduler per job, so each runs once across the cluster
    const schedules = [
      [JobName.Retention, config.retention.intervalMs],
      [JobName.Sweep, config.worker.sweepIntervalMs],
      [JobName.Finality, config.worker.finalityPollMs],
    ] as const;
    for (const [job, everyMs] of schedules) {
      scheduleMaintenance(queues, job, everyMs).catch((err: unknown) => logger.warn('could not schedule a maintenance job', { job, err }));
    }
  }
  const metricsServer = config.worker.metricsPort > 0 ? serveWorkerMetrics(metrics, config.worker.metricsPort, logger) : undefined;

  return {
    workers,
    metrics,
    async close() {
      metricsServer?.close();
      paths.stop();
      await discoveryIndexer.stop();
      treasuryRelayerWatch?.stop();
      const drained = Promise.all(workers.map((w) => w.close()));
      const timedOut = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), config.worker.shutdownTimeoutMs).unref());
      if ((await Promise.race([drained, timedOut])) === 'timeout') {
        // the jobs still running keep their persisted state; their locks lapse and another worker resumes them
        logger.warn('shutdown timeout: leaving in-flight jobs to be resumed elsewhere');
        await Promise.all(workers.map((w) => w.close(true)));
      }
      await queues.close();
      await queueStore.close();
      for (const network of opened.values()) network.close();
      await prisma.$disconnect();
      await pool.end();
    },
  };
}

/** How this worker seals the settlements it admitted: with the key that sends the sequential fee, when it has one. */
function admissionOf(keys: WorkerKeys): SettlementAdmission | undefined {
  if (keys.kind === 'openzeppelin-relayer') return keys.treasurySigns ? hmacAdmission((digest) => keys.client.rowAuthenticator(digest)) : undefined;
  const treasury = keys.treasury;
  return treasury ? treasuryAdmission(treasury.address, (digest) => treasury.signDigest(digest)) : undefined;
}
