import { MERCHANT_REQUEST_DOMAIN_PATH, MerchantAction, signingTargetOf, signMerchantRequest, type PublishedMerchantRequestDomain } from '@facilitator/merchants';
import { ApiClient, ApiError } from '../api-client';
import { resolveNetwork } from '../chain-context';
import { CliError } from '../errors';
import { parseWholeNumber, table, UINT256_MAX } from '../format';
import { loadMerchantKey } from '../merchant-signer';
import type { Output } from '../output';

export interface MerchantFlags {
  api: string;
  /** optional: the chain the merchant expects to sign for; the API's published domain decides, and a mismatch is refused */
  network?: string;
  keystore?: string;
  json?: boolean;
}

/**
 * Signs one merchant request with the merchant key (EIP-712, naming the action, the merchant, the
 * parameters, a fresh nonce and a 2-minute expiry) and sends it to `/v1/merchants/{address}/{path}`. The
 * domain is the one the API publishes (its treasury and identity chain), so the signature is good at
 * that deployment only.
 */
async function signedCall(flags: MerchantFlags, action: MerchantAction, path: string, parameters: Record<string, unknown> = {}) {
  const api = new ApiClient(flags.api);
  const { wallet } = await loadMerchantKey(flags.keystore);
  const { body: published } = await api.get<PublishedMerchantRequestDomain>(MERCHANT_REQUEST_DOMAIN_PATH);
  if (flags.network !== undefined && resolveNetwork(flags.network).caip2 !== published.network) {
    throw new CliError(`this facilitator's merchant requests are signed for ${published.network}, not ${resolveNetwork(flags.network).caip2} (drop --network)`);
  }
  const proof = await signMerchantRequest(wallet, { action, merchant: wallet.address, parameters, ...signingTargetOf(published) });
  try {
    const { body } = await api.post(`/v1/merchants/${wallet.address}/${path}`, { ...parameters, proof });
    return { merchant: wallet.address.toLowerCase(), body };
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) throw new CliError(`the API refused the signed request: ${err.apiMessage}`);
    throw err;
  }
}

/** `facilitator merchant webhook-secret [--rotate]`: the merchant's webhook secret (created on first use). */
export async function webhookSecretCommand(flags: MerchantFlags & { rotate?: boolean; graceSeconds?: string }, out: Output): Promise<number> {
  if (flags.graceSeconds !== undefined && !flags.rotate) throw new CliError('--grace-seconds goes with --rotate');
  const grace = flags.graceSeconds === undefined ? {} : { grace_seconds: Number(parseWholeNumber('--grace-seconds', flags.graceSeconds, 0n, 2_592_000n)) };
  const { merchant, body } = flags.rotate
    ? await signedCall(flags, MerchantAction.RotateWebhookSecret, 'webhook-secret/rotate', grace)
    : await signedCall(flags, MerchantAction.GetWebhookSecret, 'webhook-secret');
  const answer = {
    merchant,
    secret: String(body.secret),
    ...(body.previous_secret ? { previous_secret: String(body.previous_secret), previous_secret_expires_at: String(body.previous_secret_expires_at) } : {}),
  };
  if (flags.json) {
    out.line(JSON.stringify(answer));
    return 0;
  }
  const rows: Array<[string, string]> = [
    ['merchant', merchant],
    ['secret', answer.secret],
  ];
  if (answer.previous_secret) rows.push(['previous', `${answer.previous_secret} (still signs until ${answer.previous_secret_expires_at})`]);
  out.line(table(rows));
  return 0;
}

/** `facilitator merchant settle-key [--revoke]`: settle protection on (prints the key, once) or off. */
export async function settleKeyCommand(flags: MerchantFlags & { revoke?: boolean }, out: Output): Promise<number> {
  if (flags.revoke) {
    const { merchant } = await signedCall(flags, MerchantAction.DisableSettleProtection, 'settle-key/revoke');
    out.line(flags.json ? JSON.stringify({ merchant, settle_protection: false }) : `settle protection is off for ${merchant}; its minimum is the default again`);
    return 0;
  }
  const { merchant, body } = await signedCall(flags, MerchantAction.EnableSettleProtection, 'settle-key');
  if (flags.json) out.line(JSON.stringify({ merchant, settle_key: String(body.settle_key) }));
  else {
    out.line(table([
      ['merchant', merchant],
      ['settle key', String(body.settle_key)],
    ]));
    out.line('Settles of payments to you now need "Authorization: Bearer <settle key>". It is shown once: store it now.');
  }
  return 0;
}

/** `facilitator merchant minimum <units>`: the merchant's own minimum payment. */
export async function minimumCommand(units: string, flags: MerchantFlags, out: Output): Promise<number> {
  const minimum = parseWholeNumber('<units>', units, 0n, UINT256_MAX).toString();
  const { merchant, body } = await signedCall(flags, MerchantAction.SetMinimum, 'minimum', { minimum });
  out.line(flags.json ? JSON.stringify({ merchant, minimum: body.minimum }) : `minimum payment to ${merchant}: ${String(body.minimum)} units`);
  return 0;
}
