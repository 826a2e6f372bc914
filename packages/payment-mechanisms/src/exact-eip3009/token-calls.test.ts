import { Signature, Wallet, hexlify, randomBytes } from 'ethers';
import { eip3009TokenInterface, splitSignature, TRANSFER_WITH_AUTHORIZATION_BYTES, TRANSFER_WITH_AUTHORIZATION_VRS, transferWithAuthorizationData } from './token-calls';

const address = () => Wallet.createRandom().address;

describe("EIP-3009's hand-encoded token calldata", () => {
  it('matches ethers for transferWithAuthorization (v, r, s) with real signatures', async () => {
    for (let i = 0; i < 20; i++) {
      const payer = Wallet.createRandom();
      const signature = (await payer.signMessage(`payment ${i}`)) as string;
      const auth = {
        from: payer.address,
        to: address(),
        value: BigInt(i) * 1_000_003n,
        validAfter: 0n,
        validBefore: 1_900_000_000n + BigInt(i),
        nonce: hexlify(randomBytes(32)),
      };
      const { v, r, s } = Signature.from(signature);
      const expected = eip3009TokenInterface.encodeFunctionData(TRANSFER_WITH_AUTHORIZATION_VRS, [
        auth.from, auth.to, auth.value, auth.validAfter, auth.validBefore, auth.nonce, v, r, s,
      ]);
      expect(transferWithAuthorizationData(auth, signature)).toBe(expected);
    }
  });

  // verification refuses a high s (core/eip712.ts), so none reaches settlement; if one did, the dry run would revert
  it('reads v as 27/28 from either convention and passes a high s on for the token to judge', () => {
    const base = '0x' + '11'.repeat(32) + '22'.repeat(32);
    expect(splitSignature(base + '00').v).toBe(27);
    expect(splitSignature(base + '1c').v).toBe(28);
    const highS = '0x' + '11'.repeat(32) + 'f2'.repeat(32) + '1b';
    expect(splitSignature(highS)).toEqual({ v: 27, r: '11'.repeat(32), s: 'f2'.repeat(32) });
    expect(() => splitSignature(base + '05')).toThrow(/invalid signature v/);
  });

  // a Safe owner's eth_sign signature has v 31/32, its contract signatures 0, approved hashes 1: the token
  // must get them byte for byte (bytes overload), never split, or settlement throws on what verify accepted
  it('sends a 65-byte signature whose v is not 27/28 unchanged through the bytes overload', () => {
    const auth = { from: address(), to: address(), value: 1n, validAfter: 0n, validBefore: 2n, nonce: hexlify(randomBytes(32)) };
    const rs = '0x' + '11'.repeat(32) + '22'.repeat(32);
    for (const v of ['00', '01', '1d', '1f', '20', 'ff']) {
      const signature = rs + v;
      expect(transferWithAuthorizationData(auth, signature)).toBe(
        eip3009TokenInterface.encodeFunctionData(TRANSFER_WITH_AUTHORIZATION_BYTES, [
          auth.from, auth.to, auth.value, auth.validAfter, auth.validBefore, auth.nonce, signature,
        ]),
      );
    }
    expect(transferWithAuthorizationData(auth, rs + '1b').slice(0, 10)).toBe(eip3009TokenInterface.getFunction(TRANSFER_WITH_AUTHORIZATION_VRS)!.selector);
  });
});
