import { Interface, Signature, Wallet } from 'ethers';
import { x402UptoPermit2ProxyABI } from '@x402/evm';
import { wrapErc6492Signature } from '@facilitator/evm-chain';
import { X402_UPTO_PERMIT2_PROXY } from '../permit2/addresses';
import type { MechanismChain } from '../chain-port';
import { AMOUNT, FACILITATOR, SIGNATURE, uptoPayment } from '../testing/permit2-chain';
import { uptoPermit2 } from '.';
import { uptoProxySettlementOf, uptoSettleCalldata } from './proxy-calldata';

// the ABI @x402/evm ships, and the devnet double's own entry points (contracts/X402Permit2Proxies.sol)
const proxy = new Interface(x402UptoPermit2ProxyABI as never);
const double = new Interface([
  'function settle(((address token, uint256 amount) permitted, uint256 nonce, uint256 deadline) permit, uint256 amount, address owner, (address to, address facilitator, uint256 validAfter) witness, bytes signature)',
  'function settleWithPermit((uint256 value, uint256 deadline, bytes32 r, bytes32 s, uint8 v) permit2612, ((address token, uint256 amount) permitted, uint256 nonce, uint256 deadline) permit, uint256 amount, address owner, (address to, address facilitator, uint256 validAfter) witness, bytes signature)',
]);
const chain = {} as MechanismChain;

function ethersArgs(p: ReturnType<typeof uptoPayment>['payload'], amount: bigint, signature: string) {
  return [{ permitted: { token: p.token, amount: p.amount }, nonce: p.nonce, deadline: p.deadline }, amount, p.from, { to: p.to, facilitator: p.facilitator, validAfter: p.validAfter }, signature];
}

describe("the upto proxy's calldata", () => {
  it("encodes settle(permit, amount, owner, witness, signature) as @x402/evm's ABI and the devnet double do, whatever the signature's length", async () => {
    const { payload } = uptoPayment({ nonce: 2n ** 256n - 1n, maximum: 2n ** 255n });
    const compact = Signature.from(await Wallet.createRandom().signMessage('x')).compactSerialized;
    for (const signature of [SIGNATURE, compact, '0x' + 'cd'.repeat(97), '0x']) {
      const data = uptoSettleCalldata(payload, 12_345n, signature);
      expect(data).toBe(proxy.encodeFunctionData('settle', ethersArgs(payload, 12_345n, signature)));
      expect(data).toBe(double.encodeFunctionData('settle', ethersArgs(payload, 12_345n, signature)));
    }
  });

  it('is the direct call: the amount ordered, sent only by the facilitator the payer named', () => {
    const payment = uptoPayment();
    const call = uptoPermit2.evmExecution!.directCall(payment, chain, { amount: 400_000n });
    expect(call).toEqual({ to: X402_UPTO_PERMIT2_PROXY, data: uptoSettleCalldata(payment.payload, 400_000n, SIGNATURE), gasKind: 'x402UptoPermit2Proxy.settle', sender: FACILITATOR });
    const args = double.decodeFunctionData('settle', call.data);
    expect(args.amount).toBe(400_000n);
    expect(args.permit.permitted.amount).toBe(AMOUNT);
    expect(args.owner.toLowerCase()).toBe(payment.terms.payer);
    expect(args.witness.to.toLowerCase()).toBe(payment.terms.payee);
    expect(args.witness.facilitator.toLowerCase()).toBe(FACILITATOR);
    expect(args.signature).toBe(SIGNATURE);
    // the whole maximum is an amount like any other
    expect(double.decodeFunctionData('settle', uptoPermit2.evmExecution!.directCall(payment, chain, { amount: AMOUNT }).data).amount).toBe(AMOUNT);
  });

  it('refuses to build a call without an amount, of nothing, or above the maximum: never the maximum by default', () => {
    const payment = uptoPayment();
    expect(() => uptoPermit2.evmExecution!.directCall(payment, chain)).toThrow('needs the amount to settle');
    expect(() => uptoPermit2.evmExecution!.directCall(payment, chain, { amount: 0n })).toThrow('more than 0');
    expect(() => uptoPermit2.evmExecution!.directCall(payment, chain, { amount: AMOUNT + 1n })).toThrow('above the signed maximum');
  });

  it("gives an ERC-6492 payer's inner signature: its wallet is deployed first", () => {
    const wrapped = wrapErc6492Signature('0x' + '66'.repeat(20), '0x1234', SIGNATURE).toLowerCase();
    const call = uptoPermit2.evmExecution!.directCall(uptoPayment({ signature: wrapped }), chain, { amount: 1n });
    expect(double.decodeFunctionData('settle', call.data).signature).toBe(SIGNATURE);
  });

  it('reads the owner, nonce, and the amount settled (not the maximum) of a settle and of a settleWithPermit', () => {
    const { payload } = uptoPayment({ nonce: 12345n });
    const expected = { owner: payload.from, token: payload.token, amount: 7n, nonce: 12345n, to: payload.to };
    expect(uptoProxySettlementOf(uptoSettleCalldata(payload, 7n, SIGNATURE))).toEqual(expected);
    const permit2612 = { value: payload.amount, deadline: 1n, r: '0x' + '01'.repeat(32), s: '0x' + '02'.repeat(32), v: 27 };
    expect(uptoProxySettlementOf(proxy.encodeFunctionData('settleWithPermit', [permit2612, ...ethersArgs(payload, 7n, SIGNATURE)]))).toEqual(expected);
  });

  it("reads nothing from another call, a truncated one, or the exact proxy's settle", () => {
    const { payload } = uptoPayment();
    expect(uptoProxySettlementOf(new Interface(['function transfer(address,uint256)']).encodeFunctionData('transfer', [payload.to, 1n]))).toBeUndefined();
    expect(uptoProxySettlementOf(uptoSettleCalldata(payload, 1n, SIGNATURE).slice(0, 10 + 8 * 64))).toBeUndefined();
    expect(uptoProxySettlementOf('0x')).toBeUndefined();
    const exactSettle = new Interface(['function settle(((address,uint256),uint256,uint256),address,(address,uint256),bytes)']);
    expect(uptoProxySettlementOf(exactSettle.encodeFunctionData('settle', [[[payload.token, 1n], 1n, 1n], payload.from, [payload.to, 0n], SIGNATURE]))).toBeUndefined();
  });
});
