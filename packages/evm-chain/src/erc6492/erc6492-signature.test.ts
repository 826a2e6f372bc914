import { isErc6492Signature, parseErc6492Signature, tokenSignature, wrapErc6492Signature } from './erc6492-signature';

const FACTORY = '0x4e1dcf7ad4e460cfd30791ccc4f9c8a4f820ec67';
const INNER = '0x' + 'ab'.repeat(65);

describe('ERC-6492 signatures', () => {
  it('wraps and unwraps: factory, its calldata, and the signature the wallet will check', () => {
    const wrapped = wrapErc6492Signature(FACTORY, '0x1234', INNER);
    expect(isErc6492Signature(wrapped)).toBe(true);
    expect(parseErc6492Signature(wrapped)).toEqual({ factory: FACTORY, factoryCalldata: '0x1234', innerSignature: INNER });
    expect(tokenSignature(wrapped)).toBe(INNER);
  });

  it('leaves an ordinary signature alone', () => {
    expect(isErc6492Signature(INNER)).toBe(false);
    expect(parseErc6492Signature(INNER)).toBeUndefined();
    expect(tokenSignature(INNER)).toBe(INNER);
  });

  it('says "not one" for the magic suffix on a body that does not decode', () => {
    expect(parseErc6492Signature('0x1234' + '6492'.repeat(16))).toBeUndefined();
  });
});
