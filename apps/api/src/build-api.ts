import type { Express } from 'express';
import type { ApiConfig } from '@facilitator/config';
import { RpcChainReader, evmChainFamily } from '@facilitator/evm-chain';
import {
  ChainTransactionRepository,
  IdempotencyRepository,
  MerchantRepository,
  MerchantSessionRepository,
  PaymentIdentifierRepository,
  NothingSettledRepository,
  SettlementProgressListener,
  SettlementRequestStore,
  SettlementLookups,
  SettlementPages,
  SettlementAccountingStore,
  SettlementStore,
  VerificationRepository,
  WebhookEventRepository,
  DiscoveryRepository,
  createPgPool,
  createPrismaClient,
} from '@facilitator/db';
import type { Logger } from '@facilitator/logging';
import { createMetrics, type Metrics } from '@facilitator/metrics';
import { openQueueStore, queueStoreTargetOf } from '@facilitator/queue';
import { InvalidRequestError } from '@facilitator/core';
import {
  buildOpenApiDocument,
  lookupOpenApiPaths,
  lookupOpenApiSchemas,
  merchantOpenApiPaths,
  merchantOpenApiSchemas,
  operatorOpenApiPaths,
  operatorOpenApiSchemas,
  serviceIndexOpenApiPaths,
  serviceStatusOpenApiPaths,
  serviceStatusOpenApiSchemas,
  x402OpenApiPaths,
  x402OpenApiSchemas,
  discoveryOpenApiPaths,
  discoveryOpenApiSchemas,
} from '@facilitator/schemas';
import { DiscoveryCatalog } from '@facilitator/discovery';
import { ServiceStatusReader } from '@facilitator/service-status';
import { deploymentBinding, MerchantService, MerchantSessions, SecretBox } from '@facilitator/merchants';
import { IntakeFundsCheck, OperatorActions, SettlementRequests, UnsentSettlementStop } from '@facilitator/settlement';
import { EnabledNetworks, PaymentIdentifiers, VerificationService, X402Verifier } from '@facilitator/verification';
import { assertPublicHost, HostResolver, parseWebhookUrl, WebhookEventMac, WebhookOutbox, WebhookUrlRejected } from '@facilitator/webhooks';
import { createApp } from './app';
import { adminQueueRoutes } from './routes/admin-queues';
import { docsRoutes } from './routes/docs';
import type { ReadinessCheck } from './routes/health';
import { rpcReadiness } from './rpc-readiness';
import { metricsRoutes } from './routes/metrics';
import { queueRoutes } from './routes/queues';
import { serviceIndexRoutes } from './routes/service-index';
import { rateLimitPerClient } from './middleware/rate-limit';
import { merchantRoutes } from './routes/merchants';
import { serviceStatusRoutes } from './routes/service-status';
import { merchantAccountRoutes } from './routes/merchant-account';
import { merchantPageRoutes } from './routes/merchant-page';
import { FeeAllowances } from './merchant-page/fee-allowance';
import { settleRoutes } from './routes/settle';
import { settlementLookupRoutes } from './routes/settlement-lookup';
import { statusRoutes } from './routes/status';
import { webhookRoutes } from './routes/webhooks';
import { verifyRoutes } from './routes/verify';
import { x402Routes } from './routes/x402';
import { discoveryRoutes } from './routes/x402/discovery';
import { SettlementWaiter } from './settlement-waiter';
import { settlementProgressReader } from './settlement-progress';
import { SettleIntake } from './settle-intake/settle-intake';
import { verificationEvents } from './verification-events';

export interface ApiRuntime {
  app: Express;
  metrics: Metrics;
  close(): Promise<void>;
}

/** The composition root of the API: every dependency is made here, once, from the validated config. */
export function buildApi(config: ApiConfig, logger: Logger): ApiRuntime {
  const prisma = createPrismaClient(config.databaseUrl);
  // the queues live in Redis or, with QUEUE_BACKEND=postgres, in DATABASE_URL's database (BullMQ's PostgreSQL backend)
  const queueStore = openQueueStore(queueStoreTargetOf(config, 5));
  queueStore.redis?.on('error', (err) => logger.warn('redis connection error', { err: err.message }));
  const queues = queueStore.openQueues((err) => logger.warn('queue connection error', { err: err.message }));
  // one pool per network behind both the hot path's batch calls and ethers: one view of which endpoints are up
  const opened = config.networks.map((n) => evmChainFamily.open(n));
  const pools = opened.map((n) => n.endpoints);
  const endpoints = config.networks.map((n, i) => ({
    chainId: n.chainId,
    pool: pools[i],
    provider: opened[i].provider,
    rpc: pools[i],
    tokenAddress: n.tokenAddress,
    eip712Name: n.eip712Name,
    eip712Version: n.eip712Version,
    walletFactories: n.walletFactories,
    // a payer's code run by verification is bounded by what its settlement could let it burn
    gasCaps: n.gasCaps,
  }));
  const chain = new RpcChainReader(endpoints);
  const pool = createPgPool(config.databaseUrl);
  const verifications = new VerificationRepository(pool);
  // the settlements table, by reader: the settle intake and its waits, the public lookups, the pages, accounting
  const settlements = new SettlementRequestStore(prisma, pool);
  const settlementLookups = new SettlementLookups(prisma, pool);
  const settlementPages = new SettlementPages(prisma, pool);
  // what the API moves itself: an unsent settlement its settle request stops, an operator's retry
  const settlementMoves = new SettlementStore(prisma, pool);
  const webhookEvents = new WebhookEventRepository(prisma, pool);
  const outbox = new WebhookOutbox(webhookEvents, queues, new WebhookEventMac(config.webhookSecret));
  const networks = new EnabledNetworks(config.networks);
  // x402 payment-identifier: an id binds to its payment (verify and the settle intake both bind)
  const paymentIdRepository = new PaymentIdentifierRepository(pool);
  const paymentIds = new PaymentIdentifiers(paymentIdRepository);

  const settlementRequests = new SettlementRequests(
    settlements,
    queues,
    config.feeAmount,
    config.abuse.feeRevertBackoffMs,
    {
      policy: { payerAfterFailures: config.abuse.payerPauseAfterFailures, merchantAfterFailures: config.abuse.merchantPauseAfterFailures, windowMs: config.abuse.failurePauseWindowMs },
      counts: new SettlementAccountingStore(prisma, pool),
    },
    config.abuse.feeFreeSettlements,
    new NothingSettledRepository(pool),
    // what cannot settle now (an unfunded payer, a merchant without the fee's allowance) is refused before it is stored
    new IntakeFundsCheck(chain, config.treasuryAddress),
  );
  // waiting settle requests are woken by Postgres when their settlement changes (LISTEN), not by polling
  const progressWakeups = new SettlementProgressListener(config.databaseUrl);
  void progressWakeups.start();
  const waits = new SettlementWaiter({
    wakeups: progressWakeups,
    readProgress: settlementProgressReader({ settlements, transactions: new ChainTransactionRepository(pool) }),
    timeoutMs: config.settleWaitTimeoutMs,
    maxWaiters: config.abuse.maxSettleWaiters,
  });
  const metrics = createMetrics('api', {
    queues: [queues.settlement, queues.webhook],
    needingAttention: () => settlementPages.countNeedingAttention(),
    rpcEndpoints: () => pools.flatMap((p) => p.snapshot()),
    settleRequestsWaiting: () => waits.waiters,
  });
  // merchant requests are good at this deployment only: its treasury, and one chain for contract merchants
  const merchantRequestBinding = deploymentBinding(config.networks.map((n) => n.chainId), config.treasuryAddress);
  const merchants = new MerchantService({
    repository: new MerchantRepository(pool),
    secretBox: new SecretBox(config.webhookSecret),
    graceSeconds: config.webhookSecretGraceSeconds,
    feeAmount: config.feeAmount,
    binding: merchantRequestBinding,
    providerFor: (chainId) => endpoints.find((e) => e.chainId === chainId)?.provider,
  });
  // the merchant page: sign-ins, and the fee allowance each merchant has left (read from the chain)
  const merchantSessions = new MerchantSessions(new MerchantSessionRepository(pool));
  const feeAllowances = new FeeAllowances(opened, config.treasuryAddress, config.feeAmount);

  const verification = new VerificationService({
    chain,
    verifications,
    settlements,
    treasuryAddress: config.treasuryAddress,
    expiryMarginSeconds: config.authorizationExpiryMarginSeconds,
    minPaymentAmount: config.abuse.minPaymentAmount,
    // a merchant with settle protection on may lower its own minimum (down to 0)
    merchantMinimum: (merchant) => merchants.minimumFor(merchant),
    paymentIds,
    onVerified: async (outcome) => {
      metrics.verifications.inc({ result: outcome.record.status, reason: outcome.failure?.reason ?? 'none' });
    },
  });

  const x402Verifier = new X402Verifier({
    service: verification,
    chain,
    verifications,
    onRejected: (failure) => metrics.verifications.inc({ result: 'rejected', reason: failure.reason }),
  });
  // every settle route and form comes in here: protection, minimums, payment identity
  const settleIntake = new SettleIntake({
    verifications,
    verifier: x402Verifier,
    merchants,
    requests: settlementRequests,
    minPaymentAmount: config.abuse.minPaymentAmount,
    paymentIds,
  });

  const webhookPolicy = { requireHttps: config.nodeEnv === 'production', allowPrivate: config.webhookAllowPrivate, allowedPorts: config.webhookAllowedPorts };
  const asBadRequest = (err: unknown): never => {
    if (err instanceof WebhookUrlRejected) throw new InvalidRequestError(err.message, { errors: [{ path: '/webhook_url', message: err.message }] });
    throw err;
  };
  // webhook hosts are looked up with c-ares (never the thread pool), capped, and only for validly signed payments
  const webhookHosts = new HostResolver(config.webhookDns);
  const publishVerificationEvents = verificationEvents({
    outbox,
    logger,
    checkWebhookHost: (url) => assertPublicHost(url, webhookPolicy, webhookHosts).catch(asBadRequest),
  });
  const checkWebhookUrl = (url: string) => {
    try {
      parseWebhookUrl(url, webhookPolicy);
    } catch (err) {
      asBadRequest(err);
    }
  };

  // the public status page: one computation per STATUS_MAX_AGE_MS serves every visitor of this process
  const serviceStatus = new ServiceStatusReader({
    networks: config.networks,
    verifications,
    settlements: settlementPages,
    rpcEndpoints: () => pools.flatMap((p) => p.snapshot()),
    baseFeePerGas: async (chainId) => (await endpoints.find((e) => e.chainId === chainId)?.provider.getBlock('latest'))?.baseFeePerGas ?? null,
    feeAmount: config.feeAmount,
    maxAgeMs: config.statusMaxAgeMs,
  });

  // the x402 bazaar catalog (issue 45): declarations recorded at settle, listed by the worker once settled
  const discovery = new DiscoveryCatalog({ repository: new DiscoveryRepository(pool), retentionMs: config.discovery.retentionMs });
  const discoveryLimits = { maxBytes: config.discovery.maxDeclarationBytes, allowPrivateUrls: config.discovery.allowPrivateUrls };

  const readinessChecks: ReadinessCheck[] = [
    { name: 'postgres', check: async () => void (await prisma.$queryRaw`SELECT 1`) },
    queueStore.readiness,
    ...endpoints.map((e) => ({ name: `rpc:eip155:${e.chainId}`, check: () => rpcReadiness(e.pool) })),
  ];

  const app = createApp({
    logger,
    metrics,
    // counted in Redis when the queues live there, else in this process (QUEUE_BACKEND=postgres)
    rateLimiter: config.rateLimit ? rateLimitPerClient(queueStore.redis, config.queuePrefix, 'paid', config.rateLimit) : undefined,
    merchantRateLimiter: config.merchantRateLimit ? rateLimitPerClient(queueStore.redis, config.queuePrefix, 'merchant', config.merchantRateLimit) : undefined,
    trustProxyHops: config.trustProxyHops,
    maxBodyBytes: config.maxBodyBytes,
    readinessChecks,
    routers: [
      verifyRoutes({
        networks,
        verification,
        idempotencyKeys: new IdempotencyRepository(prisma),
        idempotencyTtlSeconds: config.idempotencyTtlSeconds,
        checkWebhookUrl,
        afterVerify: publishVerificationEvents,
      }),
      settleRoutes({ networks, intake: settleIntake, waits }),
      // before the status routes, whose /v1/settlements/:id would take "lookup"
      settlementLookupRoutes({ networks, settlements: settlementLookups, paymentIds: paymentIdRepository }),
      statusRoutes({ apiKeys: config.apiKeys, verifications, settlements: settlementLookups, merchants }),
      webhookRoutes({ apiKeys: config.apiKeys, events: webhookEvents, outbox, merchants }),
      merchantRoutes({ networks, merchants, binding: merchantRequestBinding, sessions: merchantSessions }),
      merchantAccountRoutes({ sessions: merchantSessions, settlements: settlementPages, events: webhookEvents, feeAllowances, treasury: config.treasuryAddress, discovery }),
      merchantPageRoutes(),
      queueRoutes({ queues, apiKeys: config.apiKeys, settlements: settlementPages, operator: new OperatorActions(settlementMoves, queues, outbox) }),
      metricsRoutes(metrics),
      serviceStatusRoutes(serviceStatus, config.statusMaxAgeMs),
      adminQueueRoutes(queues, config.admin),
      serviceIndexRoutes(config.admin !== undefined),
      docsRoutes(
        buildOpenApiDocument({
          extraPaths: { ...x402OpenApiPaths, ...merchantOpenApiPaths, ...operatorOpenApiPaths, ...lookupOpenApiPaths, ...serviceStatusOpenApiPaths, ...serviceIndexOpenApiPaths, ...discoveryOpenApiPaths },
          extraSchemas: { ...x402OpenApiSchemas, ...merchantOpenApiSchemas, ...operatorOpenApiSchemas, ...lookupOpenApiSchemas, ...serviceStatusOpenApiSchemas, ...discoveryOpenApiSchemas },
        }),
      ),
      x402Routes({
        networks,
        availability: verification.availability,
        verifier: x402Verifier,
        intake: settleIntake,
        outcome: {
          waits,
          stop: new UnsentSettlementStop(settlementMoves, outbox),
          transfers: settlements,
          maxHoldMs: config.settleMaxHoldMs,
          onStopped: (s) => {
            metrics.settlementsStopped.inc();
            logger.warn('settlement stopped before anything was sent: the settle request could not be held longer', { settlementId: s.id });
          },
        },
        signers: [...config.relayerAddresses, config.treasuryAddress],
        treasury: config.treasuryAddress,
        logger,
        discovery: { catalog: discovery, limits: discoveryLimits },
      }),
      discoveryRoutes(discovery),
    ],
  });

  if (!config.admin) logger.info('queue dashboard is off: set ADMIN_USERNAME and ADMIN_PASSWORD to turn it on');

  return {
    app,
    metrics,
    async close() {
      waits.close();
      await progressWakeups.close();
      await queues.close();
      await queueStore.close();
      for (const network of opened) network.close();
      await Promise.all([prisma.$disconnect(), pool.end()]);
    },
  };
}
