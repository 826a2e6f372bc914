import { GasCapExceededError, NonceConsumedError, OutcomeTimeoutError, RpcUnavailableError, TransactionRejectedError } from '@facilitator/evm-sending';
import { classifySettlementError } from './error-classes';

describe('classifySettlementError', () => {
  it.each([
    ['the RPC endpoint is down', new RpcUnavailableError(84532, 'connect ECONNREFUSED')],
    ['a transaction not mined in time', new OutcomeTimeoutError('tx_1', 120_000)],
    ['a node rejection marked retryable (a key without gas)', new TransactionRejectedError('insufficient_funds', true, undefined, 'insufficient funds')],
    ['Postgres restarting', Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' })],
    ['Postgres out of connections', Object.assign(new Error('sorry, too many clients already'), { code: '53300' })],
    ['a deadlock', Object.assign(new Error('deadlock detected'), { code: '40P01' })],
    ['Redis gone', new Error('Connection is closed.')],
    ['a socket refused', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8545'), { code: 'ECONNREFUSED' })],
    ['ethers: the node timed out', Object.assign(new Error('request timeout'), { code: 'TIMEOUT' })],
  ])('%s is transient', (_what, err) => {
    expect(classifySettlementError(err)).toBe('transient');
  });

  it.each([
    ['a gas cap exceeded', new GasCapExceededError(2_000_000n, 300_000n)],
    ['a nonce consumed by another transaction', new NonceConsumedError('tx_1', '0xabc', 7n)],
    ['a non-retryable node rejection', new TransactionRejectedError('invalid_transaction', false, undefined, 'invalid')],
    ['a broken invariant', new Error('settlement stl_1 is executing but has no transfer transaction')],
    ['a constraint violation (retrying cannot help)', Object.assign(new Error('duplicate key value'), { code: '23505', dependency: 'database' })],
    ['a bug', new TypeError("Cannot read properties of undefined (reading 'x')")],
    ['not even an Error', 'boom'],
  ])('%s is permanent', (_what, err) => {
    expect(classifySettlementError(err)).toBe('permanent');
  });
});
