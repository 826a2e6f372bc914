import { LocalKeySigner } from '@facilitator/signers';
import { keyPowers } from './key-powers';

const treasury = new LocalKeySigner('0x' + 'aa'.repeat(32));
const relayer = new LocalKeySigner('0x' + 'bb'.repeat(32));
const localKeys = (t: LocalKeySigner | undefined, relayers: LocalKeySigner[]) => ({
  kind: 'local' as const,
  treasury: t,
  relayers,
  relayerAddresses: relayers.map((r) => r.address.toLowerCase()),
  close: async () => undefined,
});

describe('keyPowers: what each key held by the worker can do to merchants', () => {
  it('names no key that can move an allowance when the worker holds relayer keys only (the atomic path)', () => {
    const powers = keyPowers(localKeys(undefined, [relayer]), 10_000n);
    expect(powers).toEqual([
      { role: 'relayer', address: relayer.address.toLowerCase(), heldBy: `local:${relayer.address}`, canDo: expect.stringContaining('only together with a payer-signed payment') },
    ]);
    expect(powers.some((p) => p.canDo.includes('whole allowance'))).toBe(false);
  });

  it("names the treasury key as the one that can take every merchant's whole allowance", () => {
    const powers = keyPowers(localKeys(treasury, [relayer]), 10_000n);
    expect(powers[0]).toMatchObject({ role: 'treasury', address: treasury.address.toLowerCase(), canDo: expect.stringContaining("every merchant's whole allowance") });
    expect(powers).toHaveLength(2);
  });

  it('lists the treasury once when it is also the only relayer', () => {
    expect(keyPowers(localKeys(treasury, [treasury]), 10_000n).map((p) => p.role)).toEqual(['treasury']);
  });
});

describe('keyPowers with an OpenZeppelin Relayer server', () => {
  it('names each relayer by its id there, the treasury\'s as the one that can move allowances', () => {
    const keys = {
      kind: 'openzeppelin-relayer' as const,
      client: {} as never,
      bindings: [
        { id: 'treasury-base', chainId: 8453, address: '0x' + '11'.repeat(20) },
        { id: 'relayer-base', chainId: 8453, address: '0x' + '22'.repeat(20) },
      ],
      treasurySigns: true,
      treasuryRelayers: ['treasury-base'],
      relayerAddresses: ['0x' + '22'.repeat(20)],
      close: async () => undefined,
    };
    expect(keyPowers(keys, 10_000n).map((p) => [p.role, p.heldBy])).toEqual([
      ['treasury', 'openzeppelin-relayer:treasury-base'],
      ['relayer', 'openzeppelin-relayer:relayer-base'],
    ]);
  });
});
