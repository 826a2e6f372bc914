import { addressWord, decodeUint, TRANSFER_TOPIC } from '@facilitator/evm-chain';
import type { LogLike, ParsedPayment } from '../mechanism';
import type { Permit2Transfer } from './payload';
import { topicOf } from './selector';

/** a proxy's events after a transfer it made: they have no arguments (x402's contracts) */
const PROXY_SETTLED_TOPICS = [topicOf('Settled()'), topicOf('SettledWithPermit()')];

/**
 * Whether `logs[at]` is a transfer of the payment's token from its payer to its payee that the x402 proxy at
 * `proxy` made: the proxy emits its Settled (or SettledWithPermit) right after Permit2 moved the tokens, and
 * Permit2 and the token's transferFrom emit nothing else in between (USDC's emits only the Transfer).
 */
export function isProxyTransfer(proxy: string, logs: readonly LogLike[], at: number, { terms, payload }: ParsedPayment<Permit2Transfer>): boolean {
  const log = logs[at];
  const next = logs[at + 1];
  if (!log || !next || log.address.toLowerCase() !== payload.token || log.topics.length !== 3) return false;
  const [topic, from, to] = log.topics.map((t) => t.toLowerCase());
  if (topic !== TRANSFER_TOPIC || from !== '0x' + addressWord(terms.payer) || to !== '0x' + addressWord(terms.payee)) return false;
  return next.address.toLowerCase() === proxy && next.topics.length === 1 && PROXY_SETTLED_TOPICS.includes(next.topics[0].toLowerCase());
}

/**
 * What the x402 proxy at `proxy` moved from the payer to the payee in a transaction that ran this payment's
 * direct call: the one transfer it made there. The proxy's events do not name the nonce, so a transaction
 * in which it moved several such transfers (only a contract calling it repeatedly can do that) does not say
 * which is this payment's: nothing is counted then.
 */
export function paidThroughProxy(proxy: string, logs: readonly LogLike[], payment: ParsedPayment<Permit2Transfer>): bigint {
  const transfers = logs.filter((_, at) => isProxyTransfer(proxy, logs, at, payment));
  return transfers.length === 1 ? decodeUint(transfers[0].data) : 0n;
}
