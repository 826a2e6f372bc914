import { exactEip3009 } from '../exact-eip3009';
import { exactPermit2 } from '../exact-permit2';
import { uptoPermit2 } from '.';

const address = (byte: string) => '0x' + byte.repeat(20);
const permit2 = (witness: unknown) => ({
  permit2Authorization: { from: address('11'), permitted: { token: address('22'), amount: '1' }, spender: address('33'), nonce: '1', deadline: '9', witness },
  signature: '0x' + 'ab'.repeat(65),
});
const eip3009 = {
  authorization: { from: address('11'), to: address('22'), value: '1', validAfter: '0', validBefore: '9', nonce: '0x' + 'ab'.repeat(32) },
  signature: '0x' + 'cd'.repeat(65),
};

describe('which Permit2 mechanism claims a payload', () => {
  it("is upto exactly when the witness names a facilitator, exact exactly when it does not: never both", () => {
    expect(uptoPermit2.claims(permit2({ to: address('44'), facilitator: address('55'), validAfter: '0' }))).toBe(true);
    expect(exactPermit2.claims(permit2({ to: address('44'), facilitator: address('55'), validAfter: '0' }))).toBe(false);
    expect(uptoPermit2.claims(permit2({ to: address('44'), validAfter: '0' }))).toBe(false);
    expect(exactPermit2.claims(permit2({ to: address('44'), validAfter: '0' }))).toBe(true);
    // the shape decides, not the field's value: a malformed facilitator is upto's to refuse by its path
    expect(uptoPermit2.claims(permit2({ to: address('44'), facilitator: null, validAfter: '0' }))).toBe(true);
    expect(exactPermit2.claims(permit2({ to: address('44'), facilitator: null, validAfter: '0' }))).toBe(false);
  });

  it('leaves EIP-3009 payloads and other shapes to others', () => {
    for (const other of [eip3009, permit2(null), permit2('x'), { permit2Authorization: null }, {}, null, 'upto', []]) {
      expect(uptoPermit2.claims(other)).toBe(false);
    }
    expect(exactEip3009.claims(permit2({ to: address('44'), facilitator: address('55'), validAfter: '0' }))).toBe(false);
  });
});
