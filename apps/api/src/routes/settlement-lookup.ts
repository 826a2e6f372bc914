import { Router } from 'express';
import { NotFoundError } from '@facilitator/core';
import { mechanismById, mechanismsOn } from '@facilitator/payment-mechanisms';
import type { PaymentIdentifierRepository, Settlement, SettlementLookups } from '@facilitator/db';
import { validateSettlementLookupQuery, type SettlementLookupQuery } from '@facilitator/schemas';
import type { EnabledNetworks } from '@facilitator/verification';
import { publicSettlementLookup } from '../presenters/public-settlement';
import { apiRouter } from '../api-router';

export const SETTLEMENT_LOOKUP_PATH = '/v1/settlements/lookup';

export interface SettlementLookupDeps {
  networks: EnabledNetworks;
  settlements: Pick<SettlementLookups, 'findByTransaction' | 'findByPayerNonce'>;
  paymentIds: Pick<PaymentIdentifierRepository, 'findSettlements'>;
}

/**
 * GET /v1/settlements/lookup?network=…&payment_id=… | &transaction=0x… | &payer=0x…&nonce=0x…: "did it
 * settle?" for anyone, with no id of ours (docs/decisions.md, "Public settlement lookup"). Open whatever
 * API_KEYS says, since it answers only what the chain shows; one indexed query; rate-limited like verify
 * and settle. Register it before the status routes: their `/v1/settlements/:id` would take "lookup".
 */
export function settlementLookupRoutes(deps: SettlementLookupDeps): Router {
  const router = apiRouter();
  router.get(SETTLEMENT_LOOKUP_PATH, async (req, res) => {
    const query = validateSettlementLookupQuery(req.query);
    const found = await settlementsOf(deps, query);
    if (found.length === 0) throw new NotFoundError(`no settlement on ${query.network} for this ${keyName(query)}`);
    res.json(publicSettlementLookup(found));
  });
  return router;
}

function settlementsOf(deps: SettlementLookupDeps, query: SettlementLookupQuery): Promise<Settlement[]> {
  const network = deps.networks.fromCaip2(query.network);
  // stored hex is lowercase; the schema let either case in
  if (query.payment_id !== undefined) return deps.paymentIds.findSettlements(network.chainId, query.payment_id);
  if (query.transaction !== undefined) return deps.settlements.findByTransaction(network.chainId, query.transaction.toLowerCase());
  // the nonce of any mechanism the network settles: the token's (EIP-3009) or Permit2's
  const nonceSpaces = mechanismsOn(network.chainId).flatMap((id) => mechanismById(id).nonce?.space(network) ?? []);
  return deps.settlements.findByPayerNonce({ chainId: network.chainId, nonceSpaces, payer: query.payer!.toLowerCase(), nonce: query.nonce!.toLowerCase() });
}

function keyName(query: SettlementLookupQuery): string {
  if (query.payment_id !== undefined) return 'payment identifier';
  return query.transaction !== undefined ? 'transaction' : 'payer and nonce';
}
