import { RelayerRotation } from './relayer-rotation';

describe('RelayerRotation', () => {
  it('hands out relayers in turn, wrapping around', () => {
    const rotation = new RelayerRotation(['0xa', '0xb', '0xc']);
    expect(Array.from({ length: 7 }, () => rotation.next())).toEqual(['0xa', '0xb', '0xc', '0xa', '0xb', '0xc', '0xa']);
  });

  it('is not affected by later changes to the list it was given', () => {
    const relayers = ['0xa', '0xb'];
    const rotation = new RelayerRotation(relayers);
    relayers.push('0xc');
    expect([rotation.next(), rotation.next(), rotation.next()]).toEqual(['0xa', '0xb', '0xa']);
    expect(rotation.addresses).toEqual(['0xa', '0xb']);
  });

  it('refuses an empty list', () => {
    expect(() => new RelayerRotation([])).toThrow(/at least one relayer/);
  });
});
