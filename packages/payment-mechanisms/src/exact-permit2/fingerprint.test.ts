import { createHash } from 'node:crypto';
import { PERMIT2_ADDRESS, X402_EXACT_PERMIT2_PROXY } from '../permit2/addresses';
import { NETWORK, NONCE, PAYEE, PAYER, permit2Payment, TOKEN } from '../testing/permit2-chain';
import { exactPermit2 } from '.';

// Stored payments are matched on their fingerprint (the settle intake finds a verification by it): the text
// it hashes must never change, whatever code builds it. Pinned on a payment of the shared fixture.
describe("exact Permit2's fingerprint", () => {
  it('is the sha256 of the mechanism id and every signed field, joined by colons, lowercase', () => {
    const { payload } = permit2Payment();
    const text = ['exact/permit2', NETWORK.chainId, PERMIT2_ADDRESS, PAYER, TOKEN, '1000000', X402_EXACT_PERMIT2_PROXY, NONCE, '1900000000', PAYEE, '0'].join(':');
    expect(exactPermit2.fingerprint(payload, NETWORK)).toBe(createHash('sha256').update(text).digest('hex'));
    expect(exactPermit2.fingerprint(payload, NETWORK)).toBe('f6edd9993818cf2b0fdef0659ee56d2e44d04656d3c85d090b6a0cfd0cfe4001');
  });
});
