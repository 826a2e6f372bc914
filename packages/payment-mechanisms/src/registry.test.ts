import { EXACT_EIP3009, EXACT_PERMIT2, NETWORKS, UPTO_PERMIT2 } from '@facilitator/core';
import { exactEip3009 } from './exact-eip3009';
import { exactPermit2 } from './exact-permit2';
import { uptoPermit2 } from './upto-permit2';
import { knownSchemes, mechanismById, mechanismFor, schemesOf, servedMechanismById } from './registry';

const payload = {
  authorization: { from: '0x' + '11'.repeat(20), to: '0x' + '22'.repeat(20), value: '1', validAfter: '0', validBefore: '9', nonce: '0x' + 'ab'.repeat(32) },
  signature: '0x' + 'cd'.repeat(65),
};

describe('mechanism registry', () => {
  it('resolves every mechanism a registry network names, and describes it under its scheme', () => {
    for (const network of NETWORKS) {
      for (const id of network.mechanisms) {
        const mechanism = mechanismById(id);
        expect(mechanism.id).toBe(id);
        expect(mechanism.describe({ chainId: network.chainId, tokenAddress: network.usdc.address.toLowerCase() }).scheme).toBe(mechanism.scheme);
      }
    }
  });

  it('chooses by scheme and by the payload shape', () => {
    expect(mechanismFor('exact', [EXACT_EIP3009], payload)).toBe(exactEip3009);
    expect(mechanismFor('upto', [EXACT_EIP3009], payload)).toBeUndefined();
    expect(mechanismFor('exact', [EXACT_EIP3009], { permit2Authorization: {}, signature: '0x' })).toBeUndefined();
    expect(mechanismFor('exact', [], payload)).toBeUndefined();
    // Permit2's exact claims its own shape, never an EIP-3009 one, and never upto's (a witness with a facilitator)
    const permit2 = { permit2Authorization: { witness: { to: '0x' + '22'.repeat(20), validAfter: '0' } }, signature: '0x' };
    expect(mechanismFor('exact', [EXACT_EIP3009, EXACT_PERMIT2], permit2)).toBe(exactPermit2);
    expect(mechanismFor('exact', [EXACT_EIP3009, EXACT_PERMIT2], payload)).toBe(exactEip3009);
    expect(exactPermit2.claims({ permit2Authorization: { witness: { to: '0x', facilitator: '0x', validAfter: '0' } }, signature: '0x' })).toBe(false);
  });

  it('serves exact through EIP-3009 and through Permit2 on every network: one scheme, two shapes', () => {
    for (const network of NETWORKS) {
      expect(network.mechanisms).toEqual([EXACT_EIP3009, EXACT_PERMIT2]);
      expect(schemesOf(network.mechanisms)).toEqual(['exact']);
    }
  });

  it('names each scheme once', () => {
    expect(schemesOf([EXACT_EIP3009, EXACT_EIP3009])).toEqual(['exact']);
    expect(schemesOf([EXACT_EIP3009, EXACT_PERMIT2, UPTO_PERMIT2])).toEqual(['exact', 'upto']);
    expect(knownSchemes()).toEqual(['exact']);
  });

  it('registers upto through Permit2 but serves it on no network, and keeps its scheme unknown, until the engine settles it', () => {
    // the settle intake does not take an amount yet, the fee rule below the maximum is undecided, and the
    // call must come from the facilitator the payer named: a payment must never verify that cannot then settle
    expect(mechanismById(UPTO_PERMIT2)).toBe(uptoPermit2);
    for (const network of NETWORKS) expect(network.mechanisms).not.toContain(UPTO_PERMIT2);
    // settlement executes served mechanisms only: a stored upto row is refused, as an unknown id is
    expect(servedMechanismById(UPTO_PERMIT2)).toBeUndefined();
    expect(servedMechanismById('later/unknown')).toBeUndefined();
    expect(servedMechanismById(EXACT_PERMIT2)).toBe(exactPermit2);
    expect(servedMechanismById(EXACT_EIP3009)).toBe(exactEip3009);
    // the x402 parser answers unsupported_scheme to an upto request rather than reading its payload as exact
    expect(knownSchemes()).not.toContain('upto');
    const upto = { permit2Authorization: { witness: { to: '0x' + '22'.repeat(20), facilitator: '0x' + '33'.repeat(20), validAfter: '0' } }, signature: '0x' };
    expect(mechanismFor('upto', [EXACT_EIP3009, EXACT_PERMIT2, UPTO_PERMIT2], upto)).toBe(uptoPermit2);
    expect(mechanismFor('exact', [EXACT_EIP3009, EXACT_PERMIT2, UPTO_PERMIT2], upto)).toBeUndefined();
    expect(mechanismFor('upto', [EXACT_EIP3009, EXACT_PERMIT2, UPTO_PERMIT2], payload)).toBeUndefined();
  });
});
