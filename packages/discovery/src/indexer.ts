import type { DiscoveryRepository, FinishedDeclaration, IndexOutcome } from '@facilitator/db';
import { isPublicAddress } from './resource-url';

export interface DiscoveryIndexerOptions {
  repository: Pick<DiscoveryRepository, 'claimFinished' | 'index'>;
  /** new resources beyond this many per payTo are not stored (DISCOVERY_MAX_RESOURCES_PER_PAYTO) */
  maxResourcesPerMerchant: number;
  /** every address of a host (the webhooks' c-ares resolver); absent or `allowPrivate`: no lookup */
  resolveHost?: (host: string) => Promise<string[]>;
  allowPrivate: boolean;
  /** how often waiting declarations are looked at (ms) */
  intervalMs?: number;
  batch?: number;
  onError?: (err: unknown) => void;
  onIndexed?: (declaration: FinishedDeclaration, outcome: IndexOutcome) => void;
}

/**
 * Lists resources once their payment settled, off the payment's path: a worker loop takes the waiting
 * declarations whose settlement is final (each claimed by one worker), resolves an accepted resource's host
 * (a name that resolves to a private address is refused, as an IP literal was at intake) and writes the
 * catalog (DiscoveryRepository.index). Nothing here can delay or fail a settlement.
 */
export class DiscoveryIndexer {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly options: DiscoveryIndexerOptions) {}

  start(): void {
    const tick = () => {
      if (this.stopped) return;
      let delay = this.options.intervalMs ?? 500;
      this.running = this.runOnce()
        .then(() => undefined)
        .catch((err) => {
          // the database is away, say: one warning every few seconds, not one per pass
          delay = Math.max(delay, 5_000);
          this.options.onError?.(err);
        })
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, delay);
        });
    };
    this.timer = setTimeout(tick, 0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  /** One pass: every finished declaration claimed now is indexed; how many. */
  async runOnce(): Promise<number> {
    const batch = this.options.batch ?? 100;
    let done = 0;
    for (;;) {
      const claimed = await this.options.repository.claimFinished(batch);
      for (const d of claimed) {
        const override = d.state === 'settled' && d.outcome === 'accepted' ? await this.hostProblem(d.resourceUrl) : undefined;
        const outcome = await this.options.repository.index(d, { maxResourcesPerMerchant: this.options.maxResourcesPerMerchant }, override);
        this.options.onIndexed?.(d, outcome);
        done += 1;
      }
      if (claimed.length < batch) return done;
    }
  }

  private async hostProblem(url: string): Promise<{ reason: string; field: string } | undefined> {
    if (this.options.allowPrivate || !this.options.resolveHost) return undefined;
    const host = new URL(url).hostname;
    try {
      const addresses = await this.options.resolveHost(host);
      const inside = addresses.find((a) => !isPublicAddress(a));
      return inside ? { field: 'resource.url', reason: `private address refused: ${host} resolves to ${inside}` } : undefined;
    } catch (err) {
      return { field: 'resource.url', reason: `${host} could not be resolved (${(err as Error).message}); listed after a later payment once it resolves to public addresses` };
    }
  }
}
