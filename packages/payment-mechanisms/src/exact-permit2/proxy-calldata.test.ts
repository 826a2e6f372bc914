import { Interface, Signature, Wallet } from 'ethers';
import { x402ExactPermit2ProxyABI } from '@x402/evm';
import { wrapErc6492Signature } from '@facilitator/evm-chain';
import { X402_EXACT_PERMIT2_PROXY } from '../permit2/addresses';
import type { MechanismChain } from '../chain-port';
import { permit2Payment, SIGNATURE } from '../testing/permit2-chain';
import { exactPermit2 } from '.';
import { proxySettlementOf, settleCalldata } from './proxy-calldata';

const proxy = new Interface(x402ExactPermit2ProxyABI as never);

function ethersArgs(p: ReturnType<typeof permit2Payment>['payload'], signature: string) {
  return [{ permitted: { token: p.token, amount: p.amount }, nonce: p.nonce, deadline: p.deadline }, p.from, { to: p.to, validAfter: p.validAfter }, signature];
}

describe("the exact proxy's calldata", () => {
  it('encodes settle(permit, owner, witness, signature) as @x402/evm\'s ABI does, whatever the signature\'s length', async () => {
    const { payload } = permit2Payment({ nonce: 2n ** 256n - 1n, amount: 2n ** 255n });
    const compact = Signature.from(await Wallet.createRandom().signMessage('x')).compactSerialized;
    // 65 bytes, EIP-2098's 64, and a contract wallet's long one (not a whole number of words)
    for (const signature of [SIGNATURE, compact, '0x' + 'cd'.repeat(97), '0x']) {
      expect(settleCalldata(payload, signature)).toBe(proxy.encodeFunctionData('settle', ethersArgs(payload, signature)));
    }
  });

  it("is the direct call: the proxy's settle from any relayer, with an ERC-6492 payer's inner signature (its wallet is deployed first)", () => {
    const payment = permit2Payment();
    // the calldata is the payload's alone: nothing is read
    const chain = {} as MechanismChain;
    expect(exactPermit2.evmExecution!.directCall(payment, chain)).toEqual({ to: X402_EXACT_PERMIT2_PROXY, data: settleCalldata(payment.payload, SIGNATURE), gasKind: 'x402ExactPermit2Proxy.settle' });
    const wrapped = wrapErc6492Signature('0x' + '66'.repeat(20), '0x1234', SIGNATURE).toLowerCase();
    const deployedFirst = permit2Payment({ signature: wrapped });
    expect(exactPermit2.evmExecution!.directCall(deployedFirst, chain).data).toBe(proxy.encodeFunctionData('settle', ethersArgs(payment.payload, SIGNATURE)));
  });

  it('reads the owner, nonce and transfer of a settle and of a settleWithPermit', () => {
    const { payload } = permit2Payment({ nonce: 12345n });
    const expected = { owner: payload.from, token: payload.token, amount: payload.amount, nonce: 12345n, to: payload.to };
    expect(proxySettlementOf(settleCalldata(payload, SIGNATURE))).toEqual(expected);
    const permit2612 = { value: payload.amount, deadline: 1n, r: '0x' + '01'.repeat(32), s: '0x' + '02'.repeat(32), v: 27 };
    expect(proxySettlementOf(proxy.encodeFunctionData('settleWithPermit', [permit2612, ...ethersArgs(payload, SIGNATURE)]))).toEqual(expected);
  });

  it('reads nothing from another call, or a truncated one', () => {
    const { payload } = permit2Payment();
    expect(proxySettlementOf(new Interface(['function transfer(address,uint256)']).encodeFunctionData('transfer', [payload.to, 1n]))).toBeUndefined();
    expect(proxySettlementOf(settleCalldata(payload, SIGNATURE).slice(0, 10 + 6 * 64))).toBeUndefined();
    expect(proxySettlementOf('0x')).toBeUndefined();
  });
});
