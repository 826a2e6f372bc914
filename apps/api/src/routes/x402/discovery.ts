import type { Request, Router } from 'express';
import { InvalidRequestError } from '@facilitator/core';
import type { DiscoveryCatalog } from '@facilitator/discovery';
import {
  DISCOVERY_DEFAULT_LIMIT,
  DISCOVERY_MAX_LIMIT,
  DISCOVERY_MAX_OFFSET,
  validateDiscoveryListQuery,
  validateDiscoverySearchQuery,
  type DiscoveryQueryBody,
} from '@facilitator/schemas';
import { apiRouter } from '../../api-router';

/** The bazaar client's two calls, under the facilitator URL (`/x402`). */
export const DISCOVERY_PATHS = ['/x402/discovery/resources', '/x402/discovery/search'] as const;

/** A query string parameter given twice (`?limit=1&limit=2`) arrives as an array: refused by the schema. */
function queryOf(req: Request, validate: (q: unknown) => DiscoveryQueryBody): DiscoveryQueryBody {
  try {
    return validate({ ...(req.query as Record<string, unknown>) });
  } catch (err) {
    // the x402 refusal carries the message only: it names every parameter at fault
    if (err instanceof InvalidRequestError) {
      const problems = ((err.details as { errors?: Array<{ path: string; message: string }> } | undefined)?.errors ?? []).map((p) => `${p.path.replace(/^\//, '') || 'query'} ${p.message}`);
      throw new InvalidRequestError(`${err.message}: ${problems.join('; ')}`, err.details);
    }
    throw err;
  }
}

function pageOf(q: DiscoveryQueryBody, start: string | undefined): { limit: number; offset: number } {
  const limit = q.limit === undefined ? DISCOVERY_DEFAULT_LIMIT : Number(q.limit);
  if (limit < 1 || limit > DISCOVERY_MAX_LIMIT) throw new InvalidRequestError(`invalid discovery query: limit must be 1-${DISCOVERY_MAX_LIMIT}`);
  const offset = start === undefined ? 0 : Number(start);
  if (offset > DISCOVERY_MAX_OFFSET) throw new InvalidRequestError(`invalid discovery query: offset (or cursor) must be at most ${DISCOVERY_MAX_OFFSET}`);
  return { limit, offset };
}

const filtersOf = (q: DiscoveryQueryBody) => ({ type: q.type, payTo: q.payTo, scheme: q.scheme, network: q.network, extensions: q.extensions });

/**
 * `GET /x402/discovery/resources` and `/x402/discovery/search`: the x402 bazaar catalog as `withBazaar`
 * (`@x402/extensions` 2.27) reads it. Bad input is a 400 in x402's refusal shape (`errorReason`, `errorMessage`).
 */
export function discoveryRoutes(catalog: DiscoveryCatalog): Router {
  const router = apiRouter();
  router.get(DISCOVERY_PATHS[0], async (req, res) => {
    const q = queryOf(req, validateDiscoveryListQuery);
    const answer = await catalog.list({ ...filtersOf(q), ...pageOf(q, q.offset) });
    res.set('Cache-Control', 'public, max-age=5').json(answer);
  });
  router.get(DISCOVERY_PATHS[1], async (req, res) => {
    const q = queryOf(req, validateDiscoverySearchQuery);
    const answer = await catalog.search({ ...filtersOf(q), query: q.query!, ...pageOf(q, q.cursor) });
    res.set('Cache-Control', 'public, max-age=5').json(answer);
  });
  return router;
}
