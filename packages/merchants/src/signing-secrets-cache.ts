import type { MerchantWebhookSecrets } from './merchant-service';

/** How long a worker signs with the secrets it read; a rotation reaches every delivery within this. */
export const SIGNING_SECRETS_MAX_AGE_MS = 1_000;
const MAX_MERCHANTS = 10_000;

/**
 * The secrets that sign a merchant's deliveries, read once per merchant per `maxAgeMs` instead of once
 * per delivery (a database read and a decryption each): a burst of one merchant's events costs one read.
 * A rotated secret that retires sooner than that is not used past its retirement. Bounded, so that many
 * merchants cannot grow it without limit; concurrent deliveries share one read.
 */
export class SigningSecretsCache {
  private readonly entries = new Map<string, { until: number; secrets: Promise<string[]> }>();

  constructor(
    private readonly read: (merchant: string) => Promise<MerchantWebhookSecrets>,
    private readonly maxAgeMs = SIGNING_SECRETS_MAX_AGE_MS,
    private readonly now: () => number = Date.now,
  ) {}

  signingSecrets(merchant: string): Promise<string[]> {
    const at = this.now();
    const cached = this.entries.get(merchant);
    if (cached && at < cached.until) return cached.secrets;
    if (this.entries.size >= MAX_MERCHANTS) this.dropExpired(at);
    const entry = {
      until: at + this.maxAgeMs,
      secrets: this.read(merchant).then(({ current, previous }) => {
        if (!previous) return [current];
        entry.until = Math.min(entry.until, previous.retiresAt.getTime());
        return [current, previous.secret];
      }),
    };
    // a failed read is not kept: the next delivery reads again
    entry.secrets.catch(() => {
      if (this.entries.get(merchant) === entry) this.entries.delete(merchant);
    });
    this.entries.set(merchant, entry);
    return entry.secrets;
  }

  private dropExpired(at: number): void {
    for (const [merchant, entry] of this.entries) if (at >= entry.until) this.entries.delete(merchant);
    if (this.entries.size >= MAX_MERCHANTS) this.entries.clear();
  }
}
