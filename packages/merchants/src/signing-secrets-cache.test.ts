import { SigningSecretsCache } from './signing-secrets-cache';
import type { MerchantWebhookSecrets } from './merchant-service';

function fakeStore(initial: MerchantWebhookSecrets) {
  const state = { secrets: initial, reads: 0, fail: false };
  const read = async (): Promise<MerchantWebhookSecrets> => {
    state.reads++;
    if (state.fail) throw new Error('database down');
    return state.secrets;
  };
  return { state, read };
}

describe('SigningSecretsCache', () => {
  let clock = 0;
  const now = () => clock;
  beforeEach(() => {
    clock = 1_000_000;
  });

  it('reads a merchant once per max age, concurrent deliveries included', async () => {
    const { state, read } = fakeStore({ current: 'whsec_a' });
    const cache = new SigningSecretsCache(read, 1_000, now);
    expect(await Promise.all([cache.signingSecrets('0xm'), cache.signingSecrets('0xm'), cache.signingSecrets('0xm')])).toEqual([['whsec_a'], ['whsec_a'], ['whsec_a']]);
    expect(state.reads).toBe(1);
    state.secrets = { current: 'whsec_b', previous: { secret: 'whsec_a', retiresAt: new Date(clock + 86_400_000) } };
    clock += 999;
    expect(await cache.signingSecrets('0xm')).toEqual(['whsec_a']);
    clock += 1;
    expect(await cache.signingSecrets('0xm')).toEqual(['whsec_b', 'whsec_a']);
    expect(state.reads).toBe(2);
  });

  it('stops signing with a retired secret at its retirement, even within the max age', async () => {
    const { state, read } = fakeStore({ current: 'whsec_b', previous: { secret: 'whsec_a', retiresAt: new Date(1_000_300) } });
    const cache = new SigningSecretsCache(read, 1_000, now);
    expect(await cache.signingSecrets('0xm')).toEqual(['whsec_b', 'whsec_a']);
    clock = 1_000_299;
    expect(await cache.signingSecrets('0xm')).toEqual(['whsec_b', 'whsec_a']);
    expect(state.reads).toBe(1);
    // the store no longer returns a retired secret; the entry expired with it, so it is read again
    state.secrets = { current: 'whsec_b' };
    clock = 1_000_300;
    expect(await cache.signingSecrets('0xm')).toEqual(['whsec_b']);
    expect(state.reads).toBe(2);
  });

  it('does not keep a failed read', async () => {
    const { state, read } = fakeStore({ current: 'whsec_a' });
    const cache = new SigningSecretsCache(read, 1_000, now);
    state.fail = true;
    await expect(cache.signingSecrets('0xm')).rejects.toThrow('database down');
    state.fail = false;
    expect(await cache.signingSecrets('0xm')).toEqual(['whsec_a']);
    expect(state.reads).toBe(2);
  });

  it('keeps each merchant apart', async () => {
    const read = async (merchant: string): Promise<MerchantWebhookSecrets> => ({ current: `whsec_${merchant}` });
    const cache = new SigningSecretsCache(read, 1_000, now);
    expect(await cache.signingSecrets('0xa')).toEqual(['whsec_0xa']);
    expect(await cache.signingSecrets('0xb')).toEqual(['whsec_0xb']);
  });
});
