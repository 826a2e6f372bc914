import type { RelayerWebhookNotification } from './api/relayer-api-types';
import type { StatusWakeups } from './status-wakeups';
import { RELAYER_SIGNATURE_HEADER, verifyRelayerWebhook } from './webhook-signature';

type WebhookHeaders = Readonly<Record<string, string | readonly string[] | undefined>>;

interface RelayerWebhookResult {
  /** the HTTP status to answer with: 200 taken, 400 unreadable, 401 bad signature */
  status: 200 | 400 | 401;
  /** whether a waiter was woken */
  woke: boolean;
  /** why it was not taken */
  reason?: string;
}

/**
 * OpenZeppelin Relayer's notifications (`transaction_update`), as an early wake-up for `waitForOutcome`.
 * Framework-free: the worker mounts it on a route and hands it the raw body (the signature covers the exact
 * bytes, so the body must not be re-serialized first) and the headers. A notification whose signature does
 * not verify is ignored.
 */
export class RelayerWebhookHandler {
  constructor(
    private readonly signingKey: string,
    private readonly wakeups: StatusWakeups,
  ) {
    if (signingKey.length === 0) throw new Error('the relayer notification signing key must not be empty');
  }

  handle(rawBody: string | Buffer, headers: WebhookHeaders): RelayerWebhookResult {
    if (!verifyRelayerWebhook(rawBody, headerValue(headers, RELAYER_SIGNATURE_HEADER), this.signingKey)) {
      return { status: 401, woke: false, reason: 'signature does not verify' };
    }
    let notification: RelayerWebhookNotification;
    try {
      notification = JSON.parse(rawBody.toString()) as RelayerWebhookNotification;
    } catch {
      return { status: 400, woke: false, reason: 'body is not JSON' };
    }
    const id = notification?.payload?.id;
    // relayer state updates and other payloads are taken (200, so the relayer does not retry) and ignored
    if (notification?.event !== 'transaction_update' || typeof id !== 'string') return { status: 200, woke: false };
    return { status: 200, woke: this.wakeups.notify(id) > 0 };
  }
}

function headerValue(headers: WebhookHeaders, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== name) continue;
    return typeof value === 'string' ? value : value?.[0];
  }
  return undefined;
}
