import type { Request, RequestHandler, Response, Router } from 'express';
import { InvalidRequestError, UnauthorizedError } from '@facilitator/core';
import type { KeysetCursor, SettlementPages, WebhookEventRepository } from '@facilitator/db';
import type { MerchantSessions } from '@facilitator/merchants';
import type { DiscoveryCatalog } from '@facilitator/discovery';
import { MERCHANT_PAGE_DEFAULT_LIMIT, validateMerchantPageQuery } from '@facilitator/schemas';
import { apiRouter } from '../api-router';
import { bearerKey } from '../bearer-key';
import { merchantOfPath } from '../merchant-address';
import type { FeeAllowances } from '../merchant-page/fee-allowance';
import { csvLine } from '../presenters/csv';
import { MERCHANT_SETTLEMENT_COLUMNS, merchantSettlementRecord } from '../presenters/merchant-settlement';
import { webhookDeliveryRecord } from '../presenters/webhook';

export interface MerchantAccountRouteDeps {
  sessions: MerchantSessions;
  settlements: SettlementPages;
  events: WebhookEventRepository;
  feeAllowances: FeeAllowances;
  treasury: string;
  /** the x402 bazaar catalog: the page's Discovery section */
  discovery?: DiscoveryCatalog;
}

/** The CSV export's bound: the newest this many settlements, read a page at a time. */
export const CSV_MAX_ROWS = 10_000;
const CSV_PAGE = 500;

const SESSION = Symbol('merchantSession');
const sessionOf = (req: Request) => (req as unknown as Record<symbol, { merchant: string; token: string }>)[SESSION];

/**
 * Only the merchant the path names, signed in (`Authorization: Bearer <session token>`), reads past this:
 * another merchant's session, an expired or signed-out one, or none at all is a 401.
 */
function merchantSession(sessions: MerchantSessions): RequestHandler {
  return async (req, res, next) => {
    const merchant = merchantOfPath(req);
    const token = bearerKey(req);
    if (token === undefined) throw new UnauthorizedError('sign in first: POST /v1/merchants/{address}/session, then send Authorization: Bearer <session_token>');
    const owner = await sessions.merchantOf(token);
    if (owner === null) throw new UnauthorizedError('the session is unknown, expired or signed out: sign in again');
    if (owner !== merchant) throw new UnauthorizedError(`this session is not ${merchant}'s`);
    (req as unknown as Record<symbol, { merchant: string; token: string }>)[SESSION] = { merchant, token };
    res.set('Cache-Control', 'no-store');
    next();
  };
}

/** The cursor a page hands out: the last row's (created_at, id), opaque to clients. */
function cursorOf(row: { createdAt: Date; id: string }): string {
  return Buffer.from(`${row.createdAt.toISOString()}|${row.id}`, 'utf8').toString('base64url');
}

function parseCursor(text: string): KeysetCursor {
  const [time, id, extra] = Buffer.from(text, 'base64url').toString('utf8').split('|');
  const createdAt = new Date(time);
  if (extra !== undefined || !id || Number.isNaN(createdAt.getTime()) || !/^[a-z]{3}_[0-9A-Za-z]{1,64}$/.test(id)) {
    throw new InvalidRequestError('before is not a cursor this API gave (next_before of a previous page)', { errors: [{ path: '/before', message: 'unknown cursor' }] });
  }
  return { createdAt, id };
}

function pageOf(req: Request): { limit: number; before?: KeysetCursor } {
  const query = validateMerchantPageQuery({ ...(req.query as Record<string, unknown>) });
  return { limit: query.limit ? Number(query.limit) : MERCHANT_PAGE_DEFAULT_LIMIT, ...(query.before ? { before: parseCursor(query.before) } : {}) };
}

/** One more row than asked tells whether an older page exists. */
async function paged<T extends { createdAt: Date; id: string }>(req: Request, read: (limit: number, before?: KeysetCursor) => Promise<T[]>) {
  const { limit, before } = pageOf(req);
  const rows = await read(limit + 1, before);
  const page = rows.slice(0, limit);
  return { page, nextBefore: rows.length > limit ? cursorOf(page[page.length - 1]) : null };
}

/**
 * What the merchant page reads with its session: the account (fees paid, allowance left and what it
 * covers), settlements (and their CSV), webhook deliveries with their attempts; and signing out.
 */
export function merchantAccountRoutes(deps: MerchantAccountRouteDeps): Router {
  const router = apiRouter();
  const signedIn = merchantSession(deps.sessions);

  router.delete('/v1/merchants/:address/session', signedIn, async (req, res) => {
    await deps.sessions.close(sessionOf(req).token);
    res.status(204).end();
  });

  router.get('/v1/merchants/:address/account', signedIn, async (req, res) => {
    const { merchant } = sessionOf(req);
    const [fees, networks] = await Promise.all([deps.settlements.feesOfMerchant(merchant), deps.feeAllowances.of(merchant)]);
    res.json({
      merchant,
      treasury: deps.treasury.toLowerCase(),
      fees_paid: fees.total,
      settlements_with_fee: fees.count,
      networks: networks.map((n) => ({
        network: n.network,
        token: n.token,
        fee: n.fee,
        allowance: n.allowance,
        balance: n.balance,
        settlements_covered: n.settlementsCovered,
        read_at: n.readAt.toISOString(),
      })),
    });
  });

  router.get('/v1/merchants/:address/settlements', signedIn, async (req, res) => {
    const { merchant } = sessionOf(req);
    const { page, nextBefore } = await paged(req, (limit, before) => deps.settlements.pageOfMerchant(merchant, limit, before));
    res.json({ settlements: page.map(merchantSettlementRecord), next_before: nextBefore });
  });

  router.get('/v1/merchants/:address/settlements.csv', signedIn, async (req, res: Response) => {
    const { merchant } = sessionOf(req);
    res.type('text/csv; charset=utf-8').attachment(`settlements-${merchant}.csv`);
    res.write(csvLine(MERCHANT_SETTLEMENT_COLUMNS as string[]));
    let before: KeysetCursor | undefined;
    for (let written = 0; written < CSV_MAX_ROWS; ) {
      const rows = await deps.settlements.pageOfMerchant(merchant, Math.min(CSV_PAGE, CSV_MAX_ROWS - written), before);
      for (const row of rows) {
        const record = merchantSettlementRecord(row);
        res.write(csvLine(MERCHANT_SETTLEMENT_COLUMNS.map((column) => record[column])));
      }
      written += rows.length;
      if (rows.length < CSV_PAGE) break;
      before = { createdAt: rows[rows.length - 1].createdAt, id: rows[rows.length - 1].id };
    }
    res.end();
  });

  router.get('/v1/merchants/:address/discovery', signedIn, async (req, res) => {
    const { merchant } = sessionOf(req);
    res.json({ resources: deps.discovery ? await deps.discovery.ofMerchant(merchant) : [] });
  });

  router.get('/v1/merchants/:address/webhook-deliveries', signedIn, async (req, res) => {
    const { merchant } = sessionOf(req);
    const { page, nextBefore } = await paged(req, (limit, before) => deps.events.pageOfMerchant(merchant, limit, before));
    res.json({ deliveries: page.map(webhookDeliveryRecord), next_before: nextBefore });
  });

  return router;
}
