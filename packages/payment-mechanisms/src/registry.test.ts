import { NETWORKS } from '@facilitator/core';
import { exactEip3009 } from './exact-eip3009';
import { exactPermit2 } from './exact-permit2';
import { uptoPermit2 } from './upto-permit2';
import { executorTargets, knownSchemes, mechanismById, mechanismFor, mechanismsInVersion, mechanismsOn, schemesOf, servedMechanismById } from './registry';
import { EXACT_EIP3009, EXACT_PERMIT2, UPTO_PERMIT2 } from './mechanism-ids';

const payload = {
  authorization: { from: '0x' + '11'.repeat(20), to: '0x' + '22'.repeat(20), value: '1', validAfter: '0', validBefore: '9', nonce: '0x' + 'ab'.repeat(32) },
  signature: '0x' + 'cd'.repeat(65),
};

describe('mechanism registry', () => {
  it('resolves every mechanism a registry network serves, and describes it under its scheme', () => {
    for (const network of NETWORKS) {
      for (const id of mechanismsOn(network.chainId)) {
        const mechanism = mechanismById(id);
        expect(mechanism.id).toBe(id);
        expect(mechanism.describe({ chainId: network.chainId, tokenAddress: network.usdc.address.toLowerCase() }, '0x' + '77'.repeat(20)).scheme).toBe(mechanism.scheme);
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

  it('serves exact through EIP-3009 and through Permit2, and upto through Permit2, on every network', () => {
    for (const network of NETWORKS) {
      expect(mechanismsOn(network.chainId)).toEqual([EXACT_EIP3009, EXACT_PERMIT2, UPTO_PERMIT2]);
      expect(schemesOf(mechanismsOn(network.chainId))).toEqual(['exact', 'upto']);
    }
    // a chain outside the registry is served nothing
    expect(mechanismsOn(1)).toEqual([]);
    expect(servedMechanismById(UPTO_PERMIT2)).toBe(uptoPermit2);
    expect(servedMechanismById(EXACT_PERMIT2)).toBe(exactPermit2);
    expect(servedMechanismById(EXACT_EIP3009)).toBe(exactEip3009);
    // an id this process does not know (a newer process stored it) is never executed here
    expect(servedMechanismById('later/unknown')).toBeUndefined();
  });

  it('names each scheme once, and in x402 v1 only what its payloads carry (EIP-3009 exact)', () => {
    expect(schemesOf([EXACT_EIP3009, EXACT_EIP3009])).toEqual(['exact']);
    expect(schemesOf([EXACT_EIP3009, EXACT_PERMIT2, UPTO_PERMIT2])).toEqual(['exact', 'upto']);
    expect(knownSchemes(2)).toEqual(['exact', 'upto']);
    expect(knownSchemes(1)).toEqual(['exact']);
    expect(mechanismsInVersion([EXACT_EIP3009, EXACT_PERMIT2, UPTO_PERMIT2], 1)).toEqual([EXACT_EIP3009]);
    expect(mechanismsInVersion([EXACT_EIP3009, EXACT_PERMIT2, UPTO_PERMIT2], 2)).toEqual([EXACT_EIP3009, EXACT_PERMIT2, UPTO_PERMIT2]);
  });

  it('tells upto and exact Permit2 payloads apart by the witness', () => {
    const upto = { permit2Authorization: { witness: { to: '0x' + '22'.repeat(20), facilitator: '0x' + '33'.repeat(20), validAfter: '0' } }, signature: '0x' };
    expect(mechanismFor('upto', [EXACT_EIP3009, EXACT_PERMIT2, UPTO_PERMIT2], upto)).toBe(uptoPermit2);
    expect(mechanismFor('exact', [EXACT_EIP3009, EXACT_PERMIT2, UPTO_PERMIT2], upto)).toBeUndefined();
    expect(mechanismFor('upto', [EXACT_EIP3009, EXACT_PERMIT2, UPTO_PERMIT2], payload)).toBeUndefined();
  });

  // executorTargets is kept per (chain, token) for every caller (the worker's items, its executor status, the CLI):
  // what one caller passes or does with the answer must not change what the next one is told
  it("gives every caller of one network the same targets, whatever the first caller's spelling of the token, and none can change them", () => {
    const token = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';
    const first = executorTargets({ chainId: 999_001, tokenAddress: token });
    expect(first.token).toBe(token.toLowerCase());
    const second = executorTargets({ chainId: 999_001, tokenAddress: token.toLowerCase() });
    expect(second).toBe(first);
    expect(() => {
      (first as Record<string, string>).token = '0x' + '66'.repeat(20);
    }).toThrow(TypeError);
    expect(() => {
      (first as Record<string, string>).attacker = '0x' + '66'.repeat(20);
    }).toThrow(TypeError);
    expect(executorTargets({ chainId: 999_001, tokenAddress: token.toLowerCase() }).token).toBe(token.toLowerCase());
    expect(Object.values(executorTargets({ chainId: 999_001, tokenAddress: token }))).not.toContain('0x' + '66'.repeat(20));
    // another chain with the same token is its own entry
    expect(executorTargets({ chainId: 999_002, tokenAddress: token })).not.toBe(first);
  });
});
