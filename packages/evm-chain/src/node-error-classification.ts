/**
 * The one table that turns what a node (or ethers, or the socket) says into what the provider does next.
 * Nodes word the same condition differently (geth, anvil, reth, erigon, nethermind, hosted RPCs), so every
 * decision about a node error goes through `classifyNodeError`, never through ad-hoc string checks.
 */

export type NodeErrorCategory =
  | 'already_known'
  | 'delegated_in_flight_limit'
  | 'nonce_too_low'
  | 'replacement_underpriced'
  | 'fee_too_low'
  | 'insufficient_funds'
  | 'nonce_too_high'
  | 'execution_reverted'
  | 'invalid_transaction'
  | 'rpc_unavailable'
  | 'unknown';

type NodeErrorAction =
  /** the node holds this exact transaction already: the broadcast succeeded */
  | 'treat_as_sent'
  /** the nonce is used on chain: look for a receipt of any of our hashes before concluding anything */
  | 'check_mined'
  /** another version with this nonce is in the pool (ours after a race, or someone else's): keep waiting */
  | 'keep_waiting'
  /** sign again with the same nonce and higher fees */
  | 'bump_fee'
  /** transient: try the same thing again later (the caller's job retries) */
  | 'retry_later'
  /** the node will not queue a nonce this far ahead: send our lower-nonce transactions first */
  | 'send_lower_nonces'
  /** the sending key needs ETH; the same transaction can be sent once it has some */
  | 'fund_sender'
  /** this transaction can never be accepted as it is */
  | 'abandon';

interface NodeErrorRule {
  category: NodeErrorCategory;
  action: NodeErrorAction;
  /** whether the caller should run its job again later */
  retryable: boolean;
  /** ethers error codes and Node.js socket error codes that mean this category on their own */
  codes: readonly string[];
  /** node messages that mean this category (checked after every rule's codes) */
  patterns: readonly RegExp[];
}

interface NodeErrorClassification {
  category: NodeErrorCategory;
  action: NodeErrorAction;
  retryable: boolean;
  /** the most specific message found in the error (the node's own words when available) */
  message: string;
}

/** In order: the first matching rule wins, so the specific wordings come before the general ones. */
export const NODE_ERROR_RULES: readonly NodeErrorRule[] = [
  {
    category: 'already_known',
    action: 'treat_as_sent',
    retryable: false,
    codes: [],
    patterns: [/already known/i, /known transaction/i, /already imported/i, /alreadyknown/i, /already (exists|in (the )?(mem)?pool)/i],
  },
  {
    // geth-family pools admit one pending transaction from an account with an EIP-7702 delegation (our
    // treasury on the atomic path): the stored version is kept and handed to the node again once the
    // pending one is mined (the outcome watcher's keep-alive), a wait, never a failure
    category: 'delegated_in_flight_limit',
    action: 'keep_waiting',
    retryable: true,
    codes: [],
    patterns: [/in-flight transaction limit reached for delegated accounts/i, /delegated account.*(in-flight|pending) (transaction )?limit/i],
  },
  {
    category: 'nonce_too_low',
    action: 'check_mined',
    retryable: false,
    codes: ['NONCE_EXPIRED'],
    patterns: [/nonce too low/i, /nonce is too low/i, /nonce has already been used/i, /oldnonce/i, /nonce.*(lower|less) than (the )?(current|account|expected)/i],
  },
  {
    category: 'replacement_underpriced',
    action: 'keep_waiting',
    retryable: true,
    codes: ['REPLACEMENT_UNDERPRICED'],
    patterns: [/replacement transaction underpriced/i, /replacement.*underpriced/i, /replacementnotallowed/i, /fee too low to replace/i],
  },
  {
    category: 'fee_too_low',
    action: 'bump_fee',
    retryable: true,
    codes: [],
    patterns: [
      /transaction underpriced/i,
      /max fee per gas less than block base fee/i,
      /fee ?cap (is )?(less|lower) than (the )?block base ?fee/i,
      /feecaptoolow/i,
      /gas price too low/i,
      /underpriced/i,
    ],
  },
  {
    category: 'insufficient_funds',
    action: 'fund_sender',
    retryable: true,
    codes: ['INSUFFICIENT_FUNDS'],
    patterns: [/insufficient funds/i, /insufficientfunds/i, /insufficient balance for transfer/i],
  },
  {
    category: 'nonce_too_high',
    action: 'send_lower_nonces',
    retryable: true,
    codes: [],
    patterns: [/nonce too high/i, /nonce gap/i, /noncegap/i],
  },
  {
    category: 'execution_reverted',
    action: 'abandon',
    retryable: false,
    codes: ['CALL_EXCEPTION'],
    patterns: [/execution reverted/i, /\breverted\b/i, /vm exception/i],
  },
  {
    category: 'invalid_transaction',
    action: 'abandon',
    retryable: false,
    codes: [],
    patterns: [
      /intrinsic gas too low/i,
      /exceeds block gas limit/i,
      /invalid sender/i,
      /invalid chain ?id/i,
      /chain ?id mismatch/i,
      /(transaction|tx) type not supported/i,
      /oversized data/i,
      /max priority fee per gas higher than max fee per gas/i,
      /tip (above|higher than) fee cap/i,
    ],
  },
  {
    category: 'rpc_unavailable',
    action: 'retry_later',
    retryable: true,
    codes: [
      'TIMEOUT',
      'NETWORK_ERROR',
      'SERVER_ERROR',
      'ECONNREFUSED',
      'ECONNRESET',
      'ECONNABORTED',
      'ETIMEDOUT',
      'EHOSTUNREACH',
      'ENETUNREACH',
      'ENOTFOUND',
      'EAI_AGAIN',
      'EPIPE',
      'UND_ERR_SOCKET',
      'UND_ERR_CONNECT_TIMEOUT',
    ],
    patterns: [
      /timed? ?out/i,
      /connection refused/i,
      /socket hang up/i,
      /bad gateway/i,
      /service unavailable/i,
      /\b50[0-9]\b/,
      /\b429\b/,
      /too many requests/i,
      /rate limit/i,
      /header not found/i,
      /could not detect network/i,
      /fetch failed/i,
    ],
  },
];

const UNKNOWN: Omit<NodeErrorClassification, 'message'> = {
  category: 'unknown',
  // Unknown wording is more often a transient node problem than a verdict on the transaction; the
  // stored state is consistent, so letting the job retry (a bounded number of times) is the safe side.
  action: 'retry_later',
  retryable: true,
};

export function classifyNodeError(error: unknown): NodeErrorClassification {
  const { codes, texts } = collect(error);
  const message = texts[0] ?? String(error);
  // Codes first: they are structural (ethers already parsed the node's answer), whereas a message can
  // contain anything, e.g. a revert reason that happens to mention "nonce too low".
  for (const rule of NODE_ERROR_RULES) {
    if (rule.codes.some((code) => codes.includes(code))) return describe(rule, message);
  }
  for (const rule of NODE_ERROR_RULES) {
    if (rule.patterns.some((pattern) => texts.some((text) => pattern.test(text)))) return describe(rule, message);
  }
  return { ...UNKNOWN, message };
}

function describe(rule: NodeErrorRule, message: string): NodeErrorClassification {
  return { category: rule.category, action: rule.action, retryable: rule.retryable, message };
}

interface ErrorLike {
  code?: unknown;
  message?: unknown;
  shortMessage?: unknown;
  error?: unknown;
  info?: { error?: unknown; responseStatus?: unknown };
  cause?: unknown;
}

/**
 * Codes and messages from an error and what it wraps, innermost node message first. ethers turns the
 * node's JSON-RPC error into `info.error` (mapped errors) or `error` ("could not coalesce error"), and
 * HTTP failures carry `info.responseStatus`; socket errors come as `code` (ECONNREFUSED) or `cause`.
 */
function collect(root: unknown): { codes: string[]; texts: string[] } {
  const codes: string[] = [];
  const nodeTexts: string[] = [];
  const outerTexts: string[] = [];
  const seen = new Set<unknown>();
  const visit = (value: unknown, depth: number) => {
    if (value === null || value === undefined || depth > 4 || seen.has(value)) return;
    if (typeof value === 'string') {
      outerTexts.push(value);
      return;
    }
    if (typeof value !== 'object') return;
    seen.add(value);
    const e = value as ErrorLike;
    if (typeof e.code === 'string') codes.push(e.code);
    const nodeError = (e.info?.error ?? e.error) as { message?: unknown } | undefined;
    if (typeof nodeError?.message === 'string') nodeTexts.push(nodeError.message);
    if (typeof e.info?.responseStatus === 'string') nodeTexts.push(e.info.responseStatus);
    if (typeof e.shortMessage === 'string') outerTexts.push(e.shortMessage);
    if (typeof e.message === 'string') outerTexts.push(e.message);
    visit(e.error, depth + 1);
    visit(e.cause, depth + 1);
  };
  visit(root, 0);
  return { codes, texts: [...nodeTexts, ...outerTexts] };
}
