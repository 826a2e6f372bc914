import { makeError } from 'ethers';
import { NODE_ERROR_RULES, classifyNodeError, type NodeErrorCategory } from './node-error-classification';

/** An ethers error with only the fields the classification reads (ethers' types want every field of each code). */
function ethersError(message: string, code: string, info: Record<string, unknown> = {}) {
  return makeError(message, code as never, info as never);
}

/** What ethers throws for a JSON-RPC error it did not map to one of its codes. */
function unmapped(message: string, code = -32000) {
  return ethersError('could not coalesce error', 'UNKNOWN_ERROR', { error: { code, message }, payload: { method: 'eth_sendRawTransaction' } });
}

/** A socket failure as Node.js raises it (ethers passes these through). */
function socketError(code: string) {
  return Object.assign(new Error(`connect ${code} 127.0.0.1:8545`), { code });
}

describe('classifyNodeError', () => {
  it.each<[string, unknown, NodeErrorCategory]>([
    // already known: the broadcast succeeded
    ['geth', unmapped('already known'), 'already_known'],
    ['older geth / parity', unmapped('Known transaction: 0x12ab'), 'already_known'],
    ['anvil', unmapped('transaction already imported', -32003), 'already_known'],
    ['nethermind', unmapped('AlreadyKnown'), 'already_known'],
    // nonce too low: the nonce is used, check our receipts
    ['geth via ethers', ethersError('nonce has already been used', 'NONCE_EXPIRED', { info: { error: { code: -32003, message: 'nonce too low' } } }), 'nonce_too_low'],
    ['raw geth', unmapped('nonce too low: next nonce 7, tx nonce 5'), 'nonce_too_low'],
    ['nethermind', unmapped('OldNonce'), 'nonce_too_low'],
    // another version is pending
    ['geth via ethers', ethersError('replacement fee too low', 'REPLACEMENT_UNDERPRICED'), 'replacement_underpriced'],
    ['raw geth', unmapped('replacement transaction underpriced'), 'replacement_underpriced'],
    // geth's txpool (EIP-7702): one pending transaction per delegated account; a wait, not a failure
    ['geth, delegated account', unmapped('in-flight transaction limit reached for delegated accounts'), 'delegated_in_flight_limit'],
    // fees below what the node takes
    ['geth', unmapped('transaction underpriced: tip needed 1, tip permitted 0'), 'fee_too_low'],
    ['anvil', unmapped('max fee per gas less than block base fee', -32003), 'fee_too_low'],
    ['reth', unmapped('fee cap less than block base fee'), 'fee_too_low'],
    // the key lacks ETH
    ['anvil via ethers', ethersError('insufficient funds for intrinsic transaction cost', 'INSUFFICIENT_FUNDS', { info: { error: { message: 'Insufficient funds for gas * price + value' } } }), 'insufficient_funds'],
    ['raw geth', unmapped('insufficient funds for gas * price + value: have 0 want 1000'), 'insufficient_funds'],
    ['nonce too high', unmapped('nonce too high'), 'nonce_too_high'],
    // reverts
    ['ethers estimateGas', ethersError('execution reverted: "ERC20: transfer amount exceeds balance"', 'CALL_EXCEPTION', { reason: 'ERC20: transfer amount exceeds balance' }), 'execution_reverted'],
    ['raw node', unmapped('execution reverted: FiatTokenV2: authorization is used or canceled', 3), 'execution_reverted'],
    ['a revert reason mentioning nonces', ethersError('execution reverted: "nonce too low"', 'CALL_EXCEPTION'), 'execution_reverted'],
    // malformed transactions
    ['intrinsic gas', unmapped('intrinsic gas too low'), 'invalid_transaction'],
    ['block gas limit', unmapped('exceeds block gas limit'), 'invalid_transaction'],
    ['wrong chain', unmapped('invalid chain id for signer'), 'invalid_transaction'],
    // the node cannot be reached or is struggling
    ['connection refused', socketError('ECONNREFUSED'), 'rpc_unavailable'],
    ['connection reset', socketError('ECONNRESET'), 'rpc_unavailable'],
    ['DNS', socketError('ENOTFOUND'), 'rpc_unavailable'],
    ['ethers timeout', ethersError('request timeout', 'TIMEOUT', { operation: 'eth_sendRawTransaction' }), 'rpc_unavailable'],
    ['HTTP 502', ethersError('server response 502 Bad Gateway', 'SERVER_ERROR', { info: { responseStatus: '502 Bad Gateway' } }), 'rpc_unavailable'],
    ['HTTP 503 in a message', new Error('Service Unavailable'), 'rpc_unavailable'],
    ['HTTP 429', unmapped('429 Too Many Requests'), 'rpc_unavailable'],
    ['lagging replica', unmapped('header not found'), 'rpc_unavailable'],
    ['wrapped in a cause', new Error('request failed', { cause: socketError('ETIMEDOUT') }), 'rpc_unavailable'],
    // anything else
    ['unrecognized', unmapped('something odd happened'), 'unknown'],
    ['not an error at all', 'boom', 'unknown'],
  ])('%s: %p → %s', (_source, error, category) => {
    expect(classifyNodeError(error).category).toBe(category);
  });

  it('gives the action and retryability that each category implies', () => {
    const summary = Object.fromEntries(NODE_ERROR_RULES.map((rule) => [rule.category, `${rule.action}, ${rule.retryable ? 'retryable' : 'final'}`]));
    expect(summary).toEqual({
      already_known: 'treat_as_sent, final',
      delegated_in_flight_limit: 'keep_waiting, retryable',
      nonce_too_low: 'check_mined, final',
      replacement_underpriced: 'keep_waiting, retryable',
      fee_too_low: 'bump_fee, retryable',
      insufficient_funds: 'fund_sender, retryable',
      nonce_too_high: 'send_lower_nonces, retryable',
      execution_reverted: 'abandon, final',
      invalid_transaction: 'abandon, final',
      rpc_unavailable: 'retry_later, retryable',
    });
    expect(classifyNodeError(unmapped('something odd happened'))).toMatchObject({ action: 'retry_later', retryable: true });
  });

  it("reports the node's own words rather than ethers' wrapper", () => {
    expect(classifyNodeError(unmapped('transaction already imported')).message).toBe('transaction already imported');
    expect(classifyNodeError(socketError('ECONNREFUSED')).message).toBe('connect ECONNREFUSED 127.0.0.1:8545');
  });
});

describe('the in-flight limit of a delegated (EIP-7702) account', () => {
  it('keeps the stored transaction and waits, retryable, whatever wraps the node message', () => {
    const message = 'in-flight transaction limit reached for delegated accounts';
    for (const error of [unmapped(message), new Error(message), { error: { message } }]) {
      expect(classifyNodeError(error)).toMatchObject({ category: 'delegated_in_flight_limit', action: 'keep_waiting', retryable: true });
    }
  });
});
