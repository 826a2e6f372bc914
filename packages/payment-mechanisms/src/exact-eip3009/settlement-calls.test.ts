import { paidBetween, wrapErc6492Signature, type AuthorizationUse } from '@facilitator/evm-chain';
import { exactEip3009 } from '.';
import type { MechanismChain } from '../chain-port';
import { eip3009TokenInterface, TRANSFER_WITH_AUTHORIZATION_VRS } from './token-calls';

const network = { chainId: 84532, tokenAddress: '0x036cbd53842c5426634e7929541ec2318f3dcf7e' };
const PAYER = '0x' + '11'.repeat(20);
const PAYEE = '0x' + '22'.repeat(20);
const NONCE = '0x' + 'ab'.repeat(32);
/** 65 bytes, v = 27: the (v, r, s) overload */
const SIGNATURE = '0x' + 'a1'.repeat(32) + '3b'.repeat(32) + '1b';
const payment = exactEip3009.fromStored(
  { authorization: { from: PAYER, to: PAYEE, value: '1000000', validAfter: '0', validBefore: '1900000000', nonce: NONCE }, signature: SIGNATURE },
  network,
);
/** the (v, r, s) transferWithAuthorization of the payment with SIGNATURE, as ethers encodes it */
const A = payment.payload.authorization;
const TRANSFER_DATA = eip3009TokenInterface.encodeFunctionData(TRANSFER_WITH_AUTHORIZATION_VRS, [
  A.from, A.to, A.value, A.validAfter, A.validBefore, A.nonce, 27, '0x' + 'a1'.repeat(32), '0x' + '3b'.repeat(32),
]);

/** The token's reads as UsdcClient makes them, each logged with its arguments; any other read fails the test. */
class RecordingToken implements MechanismChain {
  readonly tokenAddress = network.tokenAddress;
  readonly asked: string[] = [];
  used = false;
  use: AuthorizationUse | undefined;

  async isAuthorizationUsed(authorizer: string, nonce: string): Promise<boolean> {
    this.asked.push(`isAuthorizationUsed(${authorizer},${nonce})`);
    return this.used;
  }

  async findAuthorizationUse(authorizer: string, nonce: string, merchant: string): Promise<AuthorizationUse | undefined> {
    this.asked.push(`findAuthorizationUse(${authorizer},${nonce},${merchant})`);
    return this.use;
  }

  readContract(): never {
    throw new Error('EIP-3009 reads nothing but the token');
  }

  recentLogs(): never {
    throw new Error('EIP-3009 reads nothing but the token');
  }

  minedTransaction(): never {
    throw new Error('EIP-3009 reads nothing but the token');
  }
}

describe('exact through EIP-3009, as settlement asks it', () => {
  it('asks the token whether the authorization is used or cancelled, by payer and nonce', async () => {
    const token = new RecordingToken();
    expect(await exactEip3009.nonce!.isUsed(payment.terms.nonce, token)).toBe(false);
    token.used = true;
    expect(await exactEip3009.nonce!.isUsed(payment.terms.nonce, token)).toBe(true);
    expect(token.asked).toEqual([`isAuthorizationUsed(${PAYER},${NONCE})`, `isAuthorizationUsed(${PAYER},${NONCE})`]);
  });

  it('executes by the token\'s transferWithAuthorization, byte for byte as ethers encodes it', () => {
    const call = exactEip3009.evmExecution!.directCall(payment, new RecordingToken());
    expect(call).toEqual({ to: network.tokenAddress, data: TRANSFER_DATA, gasKind: 'transferWithAuthorization' });
  });

  it('gives the token the inner signature of an ERC-6492 payer, whose wallet is deployed first', () => {
    const wrapped = wrapErc6492Signature('0x' + '66'.repeat(20), '0x1234', SIGNATURE);
    const payload = { ...payment.payload, signature: wrapped.toLowerCase() };
    const call = exactEip3009.evmExecution!.directCall({ ...payment, payload, signature: payload.signature }, new RecordingToken());
    expect(call.data).toBe(TRANSFER_DATA);
  });

  it('reads what a transaction paid the payee as the sum of its token transfers from the payer to the payee', () => {
    const word = (address: string) => '0x' + address.slice(2).padStart(64, '0');
    const transfer = (from: string, to: string, value: bigint, address = network.tokenAddress) => ({
      address,
      topics: ['0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef', word(from), word(to)],
      data: '0x' + value.toString(16).padStart(64, '0'),
    });
    const logs = [transfer(PAYER, PAYEE, 1_000_000n), transfer(PAYER, '0x' + '33'.repeat(20), 5n), transfer(PAYER, PAYEE, 7n, '0x' + '99'.repeat(20))];
    expect(exactEip3009.evmExecution!.paidIn(logs, payment, network)).toBe(1_000_000n);
    expect(exactEip3009.evmExecution!.paidIn(logs, payment, network)).toBe(paidBetween(logs, network.tokenAddress, PAYER, PAYEE));
  });

  it('finds an execution by the token\'s AuthorizationUsed, with what its transfer paid the payee', async () => {
    const token = new RecordingToken();
    expect(await exactEip3009.evmExecution!.findExecution(payment, token)).toBeUndefined();
    token.use = { transactionHash: '0xabc', blockNumber: 7, paidToMerchant: 1_000_000n, to: network.tokenAddress };
    expect(await exactEip3009.evmExecution!.findExecution(payment, token)).toEqual({ txHash: '0xabc', block: 7, to: network.tokenAddress, paidToPayee: 1_000_000n });
    token.use = { transactionHash: '0xdef', blockNumber: 8, paidToMerchant: 0n };
    expect(await exactEip3009.evmExecution!.findExecution(payment, token)).toEqual({ txHash: '0xdef', block: 8, paidToPayee: 0n });
    expect(token.asked).toEqual(Array(3).fill(`findAuthorizationUse(${PAYER},${NONCE},${PAYEE})`));
  });
});
