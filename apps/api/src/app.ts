import express, { Express, RequestHandler, Router } from 'express';
import type { Logger } from '@facilitator/logging';
import type { Metrics } from '@facilitator/metrics';
import { httpMetrics } from './middleware/http-metrics';
import { requestId } from './middleware/request-id';
import { requestLogger } from './middleware/request-logger';
import { errorHandler } from './middleware/error-handler';
import { unmatchedRoute } from './middleware/unmatched-route';
import { healthRoutes, ReadinessCheck } from './routes/health';

export interface AppOptions {
  logger: Logger;
  metrics: Metrics;
  maxBodyBytes: number;
  readinessChecks: readonly ReadinessCheck[];
  /** Feature routers (verify, settle, status …), mounted at the root in order. */
  routers: readonly Router[];
  /** per-client limiter for the paid-path endpoints and the public lookup (on unless RATE_LIMIT_MAX=0) */
  rateLimiter?: RequestHandler;
  /** per-client limiter for the merchant routes (on unless MERCHANT_RATE_LIMIT_MAX=0) */
  merchantRateLimiter?: RequestHandler;
  trustProxyHops?: number;
}

/** The endpoints merchants call per payment; status and operations routes are not limited. */
// the public settlement lookup too: anyone may ask it, so it is bounded like verify and settle
// and the x402 bazaar catalog's list and search (issue 45): public database queries
export const RATE_LIMITED_PATHS = ['/v1/verify', '/v1/settle', '/x402/verify', '/x402/settle', '/v1/settlements/lookup', '/x402/discovery/resources', '/x402/discovery/search'];

/**
 * Every merchant route, a bucket of their own: sign-in and signed requests (each a signature recovery, an
 * ERC-1271 call for a contract wallet, a nonce stored), account reads and the CSV export (database reads).
 */
export const MERCHANT_RATE_LIMITED_PATHS = ['/v1/merchants'];

/** The HTTP shell: request ids, logging, JSON parsing, routes, and the single error mapping. */
export function createApp(options: AppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  // one spelling per path, as every router of ours (api-router.ts): the rate limiter's paths match exactly too
  app.set('case sensitive routing', true);
  app.set('strict routing', true);
  // behind a load balancer, the client address comes from X-Forwarded-For, trusting only that many hops
  app.set('trust proxy', options.trustProxyHops ?? 0);
  app.use(requestId());
  app.use(requestLogger(options.logger));
  app.use(httpMetrics(options.metrics));
  app.use(healthRoutes(options.readinessChecks));
  if (options.rateLimiter) app.use(RATE_LIMITED_PATHS, options.rateLimiter);
  if (options.merchantRateLimiter) app.use(MERCHANT_RATE_LIMITED_PATHS, options.merchantRateLimiter);
  app.use(express.json({ limit: options.maxBodyBytes, type: ['application/json', 'application/*+json'] }));
  for (const router of options.routers) app.use(router);
  app.use(unmatchedRoute(app));
  app.use(errorHandler(options.logger, options.maxBodyBytes));
  return app;
}
