import type { PostResult } from './safe-http-post';

/**
 * What a delivery attempt's outcome is called in the deliveries listing: a category, never the raw
 * socket error, so the listing cannot be used to probe hosts and ports (a port-scan oracle).
 */
type DeliveryOutcome = 'delivered' | 'timeout' | 'refused' | 'dns' | 'tls' | 'port_not_allowed' | 'unauthenticated' | 'network' | `http_${number}`;

const REFUSED = new Set(['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTPUBLIC', 'EPIPE']);
const DNS = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'ENODATA']);

export function deliveryOutcomeOf(result: Pick<PostResult, 'statusCode' | 'errorCode' | 'timedOut'>): DeliveryOutcome {
  if (result.statusCode !== undefined) return result.statusCode >= 200 && result.statusCode < 300 ? 'delivered' : `http_${result.statusCode}`;
  if (result.timedOut) return 'timeout';
  const code = result.errorCode ?? '';
  if (REFUSED.has(code)) return 'refused';
  if (DNS.has(code)) return 'dns';
  if (code === 'EPORTNOTALLOWED') return 'port_not_allowed';
  // an event row whose MAC does not verify (event-mac.ts): nothing was signed or sent
  if (code === 'EUNAUTHENTICATED') return 'unauthenticated';
  if (/CERT|TLS|SSL|SELF_SIGNED|DEPTH_ZERO/i.test(code)) return 'tls';
  return 'network';
}

const CATEGORY = /^(delivered|timeout|refused|dns|tls|port_not_allowed|unauthenticated|network|http_[0-9]{3})$/;

/** For records written before categories: anything that is not one is shown as `network`. */
export function categoryOf(storedError: string | null): string | null {
  if (storedError === null) return null;
  if (CATEGORY.test(storedError)) return storedError;
  const http = /receiver answered HTTP ([0-9]{3})/.exec(storedError);
  if (http) return `http_${http[1]}`;
  if (/no answer within/.test(storedError)) return 'timeout';
  if (/refused|ECONNREFUSED|non-public/.test(storedError)) return 'refused';
  return 'network';
}
