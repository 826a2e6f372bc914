import { canonicalJson } from './canonical-json';

describe('canonicalJson', () => {
  it('sorts keys at every level, without whitespace', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { f: 1, e: 0 }], c: null } })).toBe('{"a":{"c":null,"d":[2,{"e":0,"f":1}]},"b":1}');
  });

  it('treats a key named __proto__ as an ordinary key (it is not dropped, and sets no prototype)', () => {
    const parsed = JSON.parse('{"b":1,"__proto__":{"polluted":true}}') as Record<string, unknown>;
    expect(canonicalJson(parsed)).toBe('{"__proto__":{"polluted":true},"b":1}');
    // so two bodies that differ only there never hash alike
    expect(canonicalJson(parsed)).not.toBe(canonicalJson({ b: 1 }));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
