import { addressWord, decodeUint, TRANSFER_TOPIC, type FoundLog } from '@facilitator/evm-chain';
import { settledItemLogs } from '@facilitator/evm-executor';
import type { ContractReads } from '../chain-port';
import type { Execution, ParsedPayment } from '../mechanism';
import { isPermit2NonceUsed } from './nonce-bitmap';
import type { Permit2Transfer } from './payload';
import { isProxyTransfer, paidThroughProxy } from './proxy-transfer';
import type { X402Permit2Proxy } from './x402-proxy';

/** Transactions that moved the amount from the payer to the payee looked through at most: each costs two reads. */
const MAX_CANDIDATES = 16;

/**
 * The transaction that executed this Permit2 payment through `proxy`, found without a log of its own:
 * Permit2 emits nothing per nonce, and the proxies' Settled has no arguments. So:
 * - its nonce still free in Permit2's bitmap: nobody executed it (every execution sets the bit);
 * - else each recent transfer from the payer to the payee of an amount the proxy may move for it (exact: the
 *   permitted amount; upto: up to it) that the proxy made (the transfer and, right after it, the proxy's
 *   event) is a candidate. A transaction that called the proxy itself has the permit in its calldata: the
 *   one whose owner and nonce are this payment's is its execution, and what it paid the payee is read from
 *   its logs; one spending another nonce is another payment.
 * - a candidate from a transaction to our own settlement executor (`chain.executor`, the treasury) is one of
 *   our batches: its item for this payer and nonce, when it settled, is the execution (the executor's Settled
 *   names both), and what it paid the payee is that item's proxy transfer; other items are other payments.
 * - a candidate from a transaction that reached the proxy through another contract cannot be told apart without
 *   traces: `unattributed`, so the engine neither reports the payee paid nor the payment failed.
 * - no candidate is left: the nonce went without paying this payee through the proxy (invalidated by the
 *   payer, or spent by another permit of it), as far back as the search looks.
 */
export async function findProxyExecution(proxy: X402Permit2Proxy, payment: ParsedPayment<Permit2Transfer>, chain: ContractReads): Promise<Execution | undefined> {
  const { terms, payload } = payment;
  if (!(await isPermit2NonceUsed(terms.nonce, chain))) return undefined;
  const transfers = await chain.recentLogs(payload.token, [TRANSFER_TOPIC, '0x' + addressWord(terms.payer), '0x' + addressWord(terms.payee)]);
  const candidates = byTransaction(transfers.filter((log) => proxy.mayMove(decodeUint(log.data), terms)));
  if (candidates.size > MAX_CANDIDATES) {
    return { unattributed: `${candidates.size} recent transactions moved the amount from the payer to the payee; more than the ${MAX_CANDIDATES} looked through` };
  }
  let unattributed: string | undefined;
  for (const [hash, logs] of candidates) {
    const tx = await chain.minedTransaction(hash);
    if (!tx) {
      unattributed ??= `transaction ${hash} moved the amount from the payer to the payee but is no longer found`;
      continue;
    }
    const throughProxy = logs.some((log) => isProxyTransfer(proxy.address, tx.logs, tx.logs.findIndex((l) => l.index === log.index), payment));
    if (!tx.succeeded || !throughProxy) continue;
    if (chain.executor !== undefined && tx.to === chain.executor) {
      // one of our batches: its item for this payer and nonce that settled is the execution (another item of the
      // payer's, another nonce, is another payment), and what it paid the payee is that item's proxy transfer
      const item = settledItemLogs(tx.logs, chain.executor, terms.payer, terms.nonce.value);
      if (item) return { txHash: tx.hash, block: tx.blockNumber, to: tx.to, paidToPayee: paidThroughProxy(proxy.address, item, payment) };
      continue;
    }
    if (tx.to !== proxy.address) {
      unattributed ??= `transaction ${tx.hash} paid the payee the amount through the ${proxy.name} proxy from a contract (${tx.to ?? 'a creation'}): which nonce it spent is not in its calldata`;
      continue;
    }
    const call = proxy.settlementOf(tx.data);
    if (!call) {
      unattributed ??= `transaction ${tx.hash} called the ${proxy.name} proxy with calldata that is neither settle nor settleWithPermit`;
      continue;
    }
    if (call.owner !== terms.payer || call.nonce !== payload.nonce) continue;
    return { txHash: tx.hash, block: tx.blockNumber, to: tx.to, paidToPayee: paidThroughProxy(proxy.address, tx.logs, payment) };
  }
  return unattributed === undefined ? undefined : { unattributed };
}

/** The logs by their transaction (lowercase hash), in the order first found. */
function byTransaction(logs: readonly FoundLog[]): Map<string, FoundLog[]> {
  const grouped = new Map<string, FoundLog[]>();
  for (const log of logs) {
    const hash = log.transactionHash.toLowerCase();
    grouped.set(hash, [...(grouped.get(hash) ?? []), log]);
  }
  return grouped;
}
