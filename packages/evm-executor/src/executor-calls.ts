import { decodeRevertData, decodeUint, TRANSFER_TOPIC } from '@facilitator/evm-chain';
import { AbiCoder, dataSlice, Interface, type BytesLike } from 'ethers';
import { SETTLEMENT_EXECUTOR_ARTIFACT } from './settlement-executor-artifact';

export const executorInterface = new Interface(SETTLEMENT_EXECUTOR_ARTIFACT.abi as never);

/**
 * One payment for `settle`, whatever its mechanism: the merchant pays the fee and must receive `amount` from
 * the call, which goes to the token (transferWithAuthorization) or one of x402's Permit2 proxies (settle,
 * settleWithPermit); the executor refuses any other target or selector.
 */
export interface ExecutorItem {
  /** lowercase or checksummed addresses */
  payer: string;
  merchant: string;
  /** what the merchant must receive (at least) for the item to count */
  amount: bigint;
  /** the payment's nonce as bytes32 (0x, 64 hex digits): with the payer, the key of its event */
  nonce: string;
  /** the call that pays the merchant: the payment's direct call */
  target: string;
  data: string;
  /** gas given to this item alone */
  gas: bigint;
}

/** An item as `settle`'s ABI takes it. */
export function itemTuple(i: ExecutorItem): [string, string, bigint, string, string, string, bigint] {
  return [i.payer, i.merchant, i.amount, i.nonce, i.target, i.data, i.gas];
}

/** Calldata of `settle(items)`, sent to the treasury's own address. */
export function settleCalldata(items: readonly ExecutorItem[]): string {
  return executorInterface.encodeFunctionData('settle', [items.map(itemTuple)]);
}

type ItemOutcome =
  /**
   * `toTreasury`: the token transfers to the treasury among the item's own logs (those between the previous
   * item's outcome and its own): the fee the executor actually took, whatever fee it was configured with
   */
  | { settled: true; toTreasury?: Array<{ token: string; from: string; value: bigint }> }
  /**
   * `stage`: which part failed (both were undone): the fee, or the payment (its call reverted, was not one the
   * executor may make, or paid the merchant less than the amount); `reason`: the revert reason, or why none is known
   */
  | { settled: false; stage: 'fee' | 'transfer' | 'unknown'; reason: string };

interface LogLike {
  address: string;
  topics: readonly string[];
  data: string;
}

/**
 * Key of an item in a batch, as its event names it: (payer, nonce). Unique within one batch: nonces of
 * different spaces (a token's EIP-3009 nonce, Permit2's) may be equal, so a batch never holds two items of
 * one key (ExecutorBatches).
 */
export function itemKey(payer: string, nonce: string): string {
  return `${payer.toLowerCase()}:${nonce.toLowerCase()}`;
}

const SETTLED_TOPIC = executorInterface.getEvent('Settled')!.topicHash;
const NOT_SETTLED_TOPIC = executorInterface.getEvent('NotSettled')!.topicHash;
// every settlement of a batch asks about the same logs: read them once per transaction, not once per item
const outcomesByLogs = new WeakMap<readonly LogLike[], { treasury: string; outcomes: Map<string, ItemOutcome> }>();

/**
 * Each item's outcome from a mined `settle` transaction's logs (only the treasury's own logs count: the
 * executor runs as the treasury). Read straight from the topics (both events index payer and nonce): an
 * ABI decoder's checksummed addresses and result objects cost more than the rest of a settlement.
 */
export function itemOutcomes(logs: readonly LogLike[], treasury: string): Map<string, ItemOutcome> {
  const account = treasury.toLowerCase();
  const cached = outcomesByLogs.get(logs);
  if (cached && cached.treasury === account) return cached.outcomes;
  const outcomes = new Map<string, ItemOutcome>();
  // the logs since the previous item's outcome: an item's fee and transfer logs come before its Settled
  let segment: LogLike[] = [];
  for (const log of logs) {
    const [topic, payer, nonce] = log.topics;
    const isOutcome = log.address.toLowerCase() === account && log.topics.length === 3 && (topic === SETTLED_TOPIC || topic === NOT_SETTLED_TOPIC);
    if (!isOutcome) {
      segment.push(log);
      continue;
    }
    const key = itemKey('0x' + payer.slice(26), nonce);
    if (topic === SETTLED_TOPIC) outcomes.set(key, { settled: true, toTreasury: transfersTo(segment, account) });
    else outcomes.set(key, { settled: false, ...failureOf(AbiCoder.defaultAbiCoder().decode(['bytes'], log.data)[0] as string) });
    segment = [];
  }
  outcomesByLogs.set(logs, { treasury: account, outcomes });
  return outcomes;
}

/**
 * The logs of the item of `payer` and `nonce` that settled in a mined `settle` transaction of the executor at
 * `treasury` (the logs since the previous item's outcome, up to its own Settled: its fee and its payment's
 * transfer); undefined when no such item settled there (another payment's batch, or its item failed).
 */
export function settledItemLogs<Log extends LogLike>(logs: readonly Log[], treasury: string, payer: string, nonce: string): Log[] | undefined {
  const account = treasury.toLowerCase();
  const wanted = itemKey(payer, nonce);
  let start = 0;
  for (let at = 0; at < logs.length; at++) {
    const [topic, itemPayer, itemNonce] = logs[at].topics;
    const isOutcome = logs[at].address.toLowerCase() === account && logs[at].topics.length === 3 && (topic === SETTLED_TOPIC || topic === NOT_SETTLED_TOPIC);
    if (!isOutcome) continue;
    if (topic === SETTLED_TOPIC && itemKey('0x' + itemPayer.slice(26), itemNonce) === wanted) return logs.slice(start, at);
    start = at + 1;
  }
  return undefined;
}

/** ERC-20 Transfer logs to `account` (lower-case), with their token and sender; a log not shaped like one is no transfer. */
function transfersTo(logs: readonly LogLike[], account: string): Array<{ token: string; from: string; value: bigint }> {
  return logs
    .filter((l) => l.topics.length === 3 && l.topics[0] === TRANSFER_TOPIC && l.data.length === 66 && ('0x' + l.topics[2].slice(26)).toLowerCase() === account)
    .map((l) => ({ token: l.address.toLowerCase(), from: ('0x' + l.topics[1].slice(26)).toLowerCase(), value: decodeUint(l.data) }));
}

/** Which call of an item failed and why, from `settleOne`'s revert data. */
function failureOf(revertData: BytesLike): { stage: 'fee' | 'transfer' | 'unknown'; reason: string } {
  const data = typeof revertData === 'string' ? revertData : '0x' + Buffer.from(revertData).toString('hex');
  // no data: the item ran out of its gas, or a check outside both calls failed
  if (data.length < 10) return { stage: 'unknown', reason: 'item reverted without a reason (out of its gas?)' };
  const selector = dataSlice(data, 0, 4).toLowerCase();
  if (selector === executorInterface.getError('PaymentBelowFee')!.selector) return { stage: 'fee', reason: 'the payment is smaller than the fee' };
  if (selector === executorInterface.getError('CallNotAllowed')!.selector) {
    const [target, called] = executorInterface.decodeErrorResult('CallNotAllowed', data) as unknown as [string, string];
    return { stage: 'transfer', reason: `the executor may not call ${called} on ${target.toLowerCase()}` };
  }
  if (selector === executorInterface.getError('MerchantNotPaid')!.selector) {
    const [received, amount] = executorInterface.decodeErrorResult('MerchantNotPaid', data) as unknown as [bigint, bigint];
    return { stage: 'transfer', reason: `the merchant received ${received}, less than the payment's ${amount}` };
  }
  for (const [name, stage] of [['FeeNotCollected', 'fee'], ['TransferNotExecuted', 'transfer']] as const) {
    if (selector !== executorInterface.getError(name)!.selector) continue;
    const inner = executorInterface.decodeErrorResult(name, data)[0] as string;
    return { stage, reason: decodeRevertData(inner) ?? (inner === '0x' ? 'reverted without a reason' : `revert data ${inner}`) };
  }
  return { stage: 'unknown', reason: decodeRevertData(data) ?? 'item reverted' };
}
