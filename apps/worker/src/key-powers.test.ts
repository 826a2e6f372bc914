import { LocalKeySigner } from '@facilitator/signers';
import { keyPowers } from './key-powers';

const treasury = new LocalKeySigner('0x' + 'aa'.repeat(32));
const relayer = new LocalKeySigner('0x' + 'bb'.repeat(32));

describe('keyPowers: what each key held by the worker can do to merchants', () => {
  it('names no key that can move an allowance when the worker holds relayer keys only (the atomic path)', () => {
    const powers = keyPowers({ relayers: [relayer] }, 10_000n);
    expect(powers).toEqual([
      { role: 'relayer', address: relayer.address.toLowerCase(), heldBy: `local:${relayer.address}`, canDo: expect.stringContaining('only together with a payer-signed payment') },
    ]);
    expect(powers.some((p) => p.canDo.includes('whole allowance'))).toBe(false);
  });

  it("names the treasury key as the one that can take every merchant's whole allowance", () => {
    const powers = keyPowers({ treasury, relayers: [relayer] }, 10_000n);
    expect(powers[0]).toMatchObject({ role: 'treasury', address: treasury.address.toLowerCase(), canDo: expect.stringContaining("every merchant's whole allowance") });
    expect(powers).toHaveLength(2);
  });

  it('lists the treasury once when it is also the only relayer', () => {
    expect(keyPowers({ treasury, relayers: [treasury] }, 10_000n).map((p) => p.role)).toEqual(['treasury']);
  });
});
