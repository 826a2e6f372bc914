import type { MerchantRepository, StoredWebhookSecret } from '@facilitator/db';
import { MerchantService } from './merchant-service';
import { SecretBox } from './secret-box';

const MERCHANT = '0x209693bc6afc0c5328ba36faf03c514ef312287c';

/** The repository's secret rows in memory, with the database's rule for which are live. */
function fakeRepository() {
  const rows: Array<{ ciphertext: string; createdAt: Date; retiresAt: Date | null }> = [];
  let clock = 1_000;
  const tick = () => new Date(clock++);
  const repository = {
    async liveSecrets(): Promise<StoredWebhookSecret[]> {
      const now = clock;
      return rows
        .filter((r) => r.retiresAt === null || r.retiresAt.getTime() > now)
        .sort((a, b) => Number(b.retiresAt === null) - Number(a.retiresAt === null) || b.createdAt.getTime() - a.createdAt.getTime());
    },
    async insertSecretIfAbsent(_m: string, ciphertext: string) {
      if (!rows.some((r) => r.retiresAt === null)) rows.push({ ciphertext, createdAt: tick(), retiresAt: null });
    },
    async rotateSecret(_m: string, ciphertext: string, graceSeconds: number) {
      const now = clock;
      for (const r of rows) if (r.retiresAt !== null && r.retiresAt.getTime() > now) r.retiresAt = new Date(now);
      for (const r of rows) if (r.retiresAt === null) r.retiresAt = new Date(now + graceSeconds * 1000);
      rows.push({ ciphertext, createdAt: tick(), retiresAt: null });
    },
  };
  return { repository: repository as unknown as MerchantRepository, rows };
}

function service(graceSeconds = 86_400) {
  const { repository, rows } = fakeRepository();
  const merchants = new MerchantService({ repository, secretBox: new SecretBox('a-master-secret-of-at-least-32-characters'), graceSeconds, feeAmount: 10_000n });
  return { merchants, rows };
}

describe('signing secrets across a rotation', () => {
  it('the delivery right after a rotation is signed with the new secret (no cached old one alone)', async () => {
    const { merchants } = service();
    const [old] = await merchants.signingSecrets(MERCHANT);
    // a burst of deliveries signed with it (the decryption is remembered, the live rows are read each time)
    for (let i = 0; i < 3; i++) expect(await merchants.signingSecrets(MERCHANT)).toEqual([old]);
    const rotated = await merchants.rotateWebhookSecret(MERCHANT);
    expect(rotated.current).not.toBe(old);
    expect(await merchants.signingSecrets(MERCHANT)).toEqual([rotated.current, old]);
  });

  it('grace_seconds 0 retires the old secret at once; a longer grace than configured is not granted', async () => {
    const { merchants, rows } = service(3_600);
    const [old] = await merchants.signingSecrets(MERCHANT);
    const rotated = await merchants.rotateWebhookSecret(MERCHANT, 0);
    expect(rotated.previous).toBeUndefined();
    expect(await merchants.signingSecrets(MERCHANT)).toEqual([rotated.current]);
    expect(await merchants.signingSecrets(MERCHANT)).not.toContain(old);
    await merchants.rotateWebhookSecret(MERCHANT, 999_999);
    // the configured hour, not the 11 days asked for
    expect(rows[1].retiresAt!.getTime() - rows[2].createdAt.getTime()).toBe(3_600_000);
  });

  it('a second rotation with grace 0 cuts the first one’s grace short (a leaked old secret stops signing)', async () => {
    const { merchants } = service();
    const [leaked] = await merchants.signingSecrets(MERCHANT);
    const first = await merchants.rotateWebhookSecret(MERCHANT);
    expect(first.previous?.secret).toBe(leaked);
    const second = await merchants.rotateWebhookSecret(MERCHANT, 0);
    const signing = await merchants.signingSecrets(MERCHANT);
    expect(signing).toEqual([second.current]);
    expect(signing).not.toContain(leaked);
  });
});
