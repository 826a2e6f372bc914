import { SharedReadings } from '@facilitator/core';
import type { MerchantWebhookSecrets } from './merchant-service';

/** How long a worker signs with the secrets it read; a rotation reaches every delivery within this. */
export const SIGNING_SECRETS_MAX_AGE_MS = 1_000;
const MAX_MERCHANTS = 10_000;

/**
 * The secrets that sign a merchant's deliveries, read once per merchant per `maxAgeMs` instead of once
 * per delivery (a database read and a decryption each): a burst of one merchant's events costs one read,
 * shared by concurrent deliveries; a failed read is not kept; bounded, so that many merchants cannot grow
 * it without limit. A rotated secret that retires sooner is read again at its retirement, not used past it.
 */
export class SigningSecretsCache {
  private readonly readings: SharedReadings<string, MerchantWebhookSecrets>;

  constructor(
    private readonly read: (merchant: string) => Promise<MerchantWebhookSecrets>,
    private readonly maxAgeMs = SIGNING_SECRETS_MAX_AGE_MS,
    private readonly now: () => number = Date.now,
  ) {
    this.readings = new SharedReadings({ maxEntries: MAX_MERCHANTS, now });
  }

  async signingSecrets(merchant: string): Promise<string[]> {
    const read = () => this.read(merchant);
    let secrets = await this.readings.get(merchant, this.maxAgeMs, read);
    if (this.retired(secrets)) secrets = await this.readings.get(merchant, 0, read);
    return secrets.previous && !this.retired(secrets) ? [secrets.current, secrets.previous.secret] : [secrets.current];
  }

  private retired({ previous }: MerchantWebhookSecrets): boolean {
    return previous !== undefined && previous.retiresAt.getTime() <= this.now();
  }
}
