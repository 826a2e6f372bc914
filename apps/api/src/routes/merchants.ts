import type { Router } from 'express';
import {
  MERCHANT_REQUEST_DOMAIN_PATH,
  MERCHANT_REQUEST_TYPES,
  MerchantAction,
  merchantRequestDomain,
  type MerchantRequestBinding,
  type MerchantService,
  type MerchantSessions,
} from '@facilitator/merchants';
import { validateMerchantActionRequest, validateMerchantMinimumRequest, validateMerchantRotateRequest, type MerchantProofBody } from '@facilitator/schemas';
import type { EnabledNetworks } from '@facilitator/verification';
import { jsonObjectBody } from '../request-body';
import { apiRouter } from '../api-router';
import { merchantOfPath } from '../merchant-address';

export interface MerchantRouteDeps {
  networks: EnabledNetworks;
  merchants: MerchantService;
  /** what a merchant request is signed for at this deployment */
  binding: MerchantRequestBinding;
  /** the merchant page's sign-ins (routes/merchant-account.ts serves what they read) */
  sessions: MerchantSessions;
}

const merchantOf = merchantOfPath;

/**
 * Merchant self-service without signup. The payTo address is the merchant; every request is signed by
 * it (EIP-712 `MerchantRequest`, or ERC-1271 for a contract wallet), names its action and parameters,
 * and is accepted once before its short expiry.
 */
export function merchantRoutes(deps: MerchantRouteDeps): Router {
  const router = apiRouter();

  const authenticate = async (merchant: string, action: MerchantAction, parameters: Record<string, unknown>, proof: MerchantProofBody) => {
    const network = deps.networks.fromCaip2(proof.network);
    await deps.merchants.authenticate({
      merchant,
      action,
      parameters,
      chainId: network.chainId,
      nonce: proof.nonce,
      expiresAt: proof.expires_at,
      signature: proof.signature,
    });
  };
  const secretAnswer = (merchant: string, secrets: Awaited<ReturnType<MerchantService['webhookSecrets']>>) => ({
    merchant,
    secret: secrets.current,
    ...(secrets.previous ? { previous_secret: secrets.previous.secret, previous_secret_expires_at: secrets.previous.retiresAt.toISOString() } : {}),
  });

  // what to sign: the deployment's EIP-712 domain (its treasury, its identity chain), public
  router.get(MERCHANT_REQUEST_DOMAIN_PATH, (_req, res) => {
    res.json({
      network: `eip155:${deps.binding.chainId}`,
      domain: merchantRequestDomain(deps.binding),
      primary_type: 'MerchantRequest',
      types: MERCHANT_REQUEST_TYPES,
    });
  });

  // sign in to the merchant page: one signed request opens a short session for reads (never for changes)
  router.post('/v1/merchants/:address/session', jsonObjectBody(), async (req, res) => {
    const merchant = merchantOf(req);
    const { proof } = validateMerchantActionRequest(req.body);
    await authenticate(merchant, MerchantAction.CreateSession, {}, proof);
    const session = await deps.sessions.open(merchant);
    res.status(201).set('Cache-Control', 'no-store').json({ merchant, session_token: session.token, expires_at: session.expiresAt.toISOString() });
  });

  router.post('/v1/merchants/:address/webhook-secret', jsonObjectBody(), async (req, res) => {
    const merchant = merchantOf(req);
    const { proof } = validateMerchantActionRequest(req.body);
    await authenticate(merchant, MerchantAction.GetWebhookSecret, {}, proof);
    res.set('Cache-Control', 'no-store').json(secretAnswer(merchant, await deps.merchants.webhookSecrets(merchant)));
  });

  router.post('/v1/merchants/:address/webhook-secret/rotate', jsonObjectBody(), async (req, res) => {
    const merchant = merchantOf(req);
    const { proof, grace_seconds: graceSeconds } = validateMerchantRotateRequest(req.body);
    // the grace is signed with the request when given, so a relayed request cannot be made to keep a leaked secret alive
    await authenticate(merchant, MerchantAction.RotateWebhookSecret, graceSeconds === undefined ? {} : { grace_seconds: graceSeconds }, proof);
    res.set('Cache-Control', 'no-store').json(secretAnswer(merchant, await deps.merchants.rotateWebhookSecret(merchant, graceSeconds)));
  });

  router.post('/v1/merchants/:address/settle-key', jsonObjectBody(), async (req, res) => {
    const merchant = merchantOf(req);
    const { proof } = validateMerchantActionRequest(req.body);
    await authenticate(merchant, MerchantAction.EnableSettleProtection, {}, proof);
    const key = await deps.merchants.enableSettleProtection(merchant);
    res.set('Cache-Control', 'no-store').json({ merchant, settle_key: key, settle_protection: true });
  });

  router.post('/v1/merchants/:address/settle-key/revoke', jsonObjectBody(), async (req, res) => {
    const merchant = merchantOf(req);
    const { proof } = validateMerchantActionRequest(req.body);
    await authenticate(merchant, MerchantAction.DisableSettleProtection, {}, proof);
    const record = await deps.merchants.disableSettleProtection(merchant);
    res.json({ merchant, settle_protection: false, minimum: record.minimumAmount });
  });

  router.post('/v1/merchants/:address/minimum', jsonObjectBody(), async (req, res) => {
    const merchant = merchantOf(req);
    const { minimum, proof } = validateMerchantMinimumRequest(req.body);
    await authenticate(merchant, MerchantAction.SetMinimum, { minimum }, proof);
    const record = await deps.merchants.setMinimum(merchant, BigInt(minimum));
    res.json({ merchant, settle_protection: record.settleKeyHash !== null, minimum: record.minimumAmount });
  });

  return router;
}
