import { Wallet, hexlify, randomBytes, toBeHex, zeroPadValue } from 'ethers';
import { fiatTokenInterface } from './token-abi';
import { authorizationStateData, decodeUint } from './token-calldata';
import { paidBetween, paidByAuthorization, UsdcClient } from './usdc-client';

// the encoders never touch the provider
const usdc = new UsdcClient(undefined as never, '0x036CbD53842c5426634e7929541eC2318f3dCF7e');
const address = () => Wallet.createRandom().address;

describe('hand-encoded token calldata', () => {
  it('matches ethers for transferFrom', () => {
    for (const value of [0n, 1n, 10_000n, 2n ** 256n - 1n]) {
      const [from, to] = [address(), address()];
      expect(usdc.transferFromData(from, to, value)).toBe(fiatTokenInterface.encodeFunctionData('transferFrom', [from, to, value]));
    }
  });

  it('matches ethers for authorizationState, whatever the case of the address', () => {
    for (let i = 0; i < 10; i++) {
      const [authorizer, nonce] = [address(), hexlify(randomBytes(32))];
      const expected = fiatTokenInterface.encodeFunctionData('authorizationState', [authorizer, nonce]);
      expect(authorizationStateData(authorizer, nonce)).toBe(expected);
      expect(authorizationStateData(authorizer.toLowerCase(), nonce.toUpperCase().replace('0X', '0x'))).toBe(expected);
    }
  });

  it('decodes uint256 and bool results, and refuses an empty answer', () => {
    expect(decodeUint(toBeHex(123456789n, 32))).toBe(123456789n);
    expect(decodeUint(zeroPadValue('0x01', 32))).toBe(1n);
    expect(() => decodeUint('0x')).toThrow(/unexpected call result/);
  });

  it('sums only Transfer events of the token between the two parties', () => {
    const [payer, merchant, other] = [address(), address(), address()];
    const transfer = (token: string, from: string, to: string, value: bigint) => {
      const log = fiatTokenInterface.encodeEventLog('Transfer', [from, to, value]);
      return { address: token, topics: log.topics, data: log.data };
    };
    const approval = fiatTokenInterface.encodeEventLog('Approval', [payer, merchant, 5n]);
    const logs = [
      transfer(usdc.tokenAddress.toLowerCase(), payer, merchant, 700n),
      transfer(usdc.tokenAddress, payer, merchant, 300n),
      transfer(usdc.tokenAddress, payer, other, 1_000n),
      transfer(address(), payer, merchant, 1_000n),
      { address: usdc.tokenAddress, topics: approval.topics, data: approval.data },
    ];
    expect(paidBetween(logs, usdc.tokenAddress, payer.toLowerCase(), merchant)).toBe(1_000n);
    expect(paidBetween(logs, usdc.tokenAddress, merchant, payer)).toBe(0n);
  });

  it("paidByAuthorization: only the Transfer right after the authorization's AuthorizationUsed counts, never the transaction's sum", () => {
    const [payer, merchant, attacker] = [address(), address(), address()];
    const token = usdc.tokenAddress;
    const event = (name: string, args: unknown[]) => ({ address: token, ...fiatTokenInterface.encodeEventLog(name, args) });
    const [n1, n2] = ['0x' + '01'.repeat(32), '0x' + '02'.repeat(32)];
    // one multicall: n1 and n2 used to pay the attacker, then one plain transfer of 100 to the merchant
    const multicall = [
      event('AuthorizationUsed', [payer, n1]),
      event('Transfer', [payer, attacker, 100n]),
      event('AuthorizationUsed', [payer, n2]),
      event('Transfer', [payer, attacker, 100n]),
      event('Transfer', [payer, merchant, 100n]),
    ];
    expect(paidBetween(multicall, token, payer, merchant)).toBe(100n); // what the old rule counted for each
    expect(paidByAuthorization(multicall, token, payer, n1, merchant)).toBe(0n);
    expect(paidByAuthorization(multicall, token, payer, n2, merchant)).toBe(0n);
    // the authorization that paid the merchant itself
    const own = [event('Transfer', [merchant, token, 10n]), event('AuthorizationUsed', [payer, n1]), event('Transfer', [payer, merchant, 100n])];
    expect(paidByAuthorization(own, token, payer, n1, merchant)).toBe(100n);
    expect(paidByAuthorization(own, token, payer, n2, merchant)).toBe(0n);
    // another token's events are not USDC's
    expect(paidByAuthorization(own, address(), payer, n1, merchant)).toBe(0n);
  });
});
