import { newSettleKey, newWebhookSecret, settleKeyHash } from './random-secrets';
import { SecretBox } from './secret-box';

const MASTER = 'a-master-secret-of-at-least-32-characters';
const MERCHANT = '0x209693bc6afc0c5328ba36faf03c514ef312287c';

describe('SecretBox', () => {
  it('round-trips, never storing the plaintext', () => {
    const box = new SecretBox(MASTER);
    const secret = newWebhookSecret();
    const sealed = box.seal(secret, MERCHANT);
    expect(sealed).toMatch(/^v1\./);
    expect(sealed).not.toContain(secret.slice(6, 20));
    expect(box.open(sealed, MERCHANT)).toBe(secret);
    // a fresh IV each time
    expect(box.seal(secret, MERCHANT)).not.toBe(sealed);
  });

  it('refuses another master key, another merchant row, or a tampered text', () => {
    const sealed = new SecretBox(MASTER).seal('whsec_x', MERCHANT);
    expect(() => new SecretBox(`${MASTER}!`).open(sealed, MERCHANT)).toThrow();
    expect(() => new SecretBox(MASTER).open(sealed, '0x' + '11'.repeat(20))).toThrow();
    const parts = sealed.split('.');
    parts[3] = Buffer.from('whsec_y').toString('base64url');
    expect(() => new SecretBox(MASTER).open(parts.join('.'), MERCHANT)).toThrow();
  });

  it('refuses a truncated tag, even one that is a prefix of the right tag', () => {
    const box = new SecretBox(MASTER);
    const parts = box.seal('whsec_x', MERCHANT).split('.');
    const tag = Buffer.from(parts[2], 'base64url');
    expect(tag).toHaveLength(16);
    for (const length of [4, 8, 12, 15]) {
      const truncated = [parts[0], parts[1], tag.subarray(0, length).toString('base64url'), parts[3]].join('.');
      expect(() => box.open(truncated, MERCHANT)).toThrow('truncated tag');
    }
    expect(box.open(parts.join('.'), MERCHANT)).toBe('whsec_x');
  });
});

describe('random secrets', () => {
  it('a webhook secret is whsec_ + base64 of 32 bytes; a settle key is stored as its SHA-256', () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    const key = newSettleKey();
    expect(key).toMatch(/^fsk_[A-Za-z0-9_-]{43}$/);
    expect(settleKeyHash(key)).toMatch(/^[0-9a-f]{64}$/);
    expect(newWebhookSecret()).not.toBe(secret);
  });
});
