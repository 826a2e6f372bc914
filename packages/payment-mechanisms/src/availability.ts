import type { PaymentReads } from './chain-port';
import type { PaymentMechanism } from './mechanism';
import { mechanismById, mechanismsOn } from './registry';
import type { PaymentMechanismId } from './mechanism-ids';

/** A missing contract is asked about again for the list after this long (a deployment appears without a restart). */
const RECHECK_MISSING_MS = 60_000;

/**
 * Which mechanisms a network serves: of those the registry serves there (`mechanismsOn`), the ones
 * whose contracts exist on its chain (`PaymentMechanism.availability`: a Permit2 mechanism needs x402's proxy
 * there). The one place that knows it, asked by `/x402/supported` (which then lists nothing verify refuses)
 * and by verification (which refuses a payment of a mechanism whose contracts are missing). A contract found
 * stays known (x402's contracts are immutable at their canonical addresses); a missing one is asked again:
 * by verify each time, for the list once `recheckMissingMs` has passed.
 */
export class MechanismAvailability {
  private readonly found = new Set<string>();
  private readonly missingAt = new Map<string, number>();
  private readonly now: () => number;
  private readonly recheckMissingMs: number;

  constructor(
    private readonly readsOn: (chainId: number) => PaymentReads,
    options: { recheckMissingMs?: number; now?: () => number } = {},
  ) {
    this.now = options.now ?? Date.now;
    this.recheckMissingMs = options.recheckMissingMs ?? RECHECK_MISSING_MS;
  }

  /** Why `mechanism` cannot execute on the chain (a contract it settles through is missing), if it cannot. Throws what the chain read throws. */
  async problem(chainId: number, mechanism: PaymentMechanism<unknown>): Promise<string | undefined> {
    const key = `${chainId}:${mechanism.id}`;
    if (!mechanism.availability || this.found.has(key)) return undefined;
    const problem = await mechanism.availability.unavailable(this.readsOn(chainId));
    if (problem) this.missingAt.set(key, this.now());
    else {
      this.found.add(key);
      this.missingAt.delete(key);
    }
    return problem;
  }

  /**
   * The mechanisms the network serves, in the registry's order. One whose contracts could not be read
   * (the chain did not answer) is left out this time, as one known missing is until it is asked again.
   */
  async servedOn(chainId: number): Promise<PaymentMechanismId[]> {
    const ids = mechanismsOn(chainId);
    const served = await Promise.all(
      ids.map(async (id) => {
        const missingAt = this.missingAt.get(`${chainId}:${id}`);
        if (missingAt !== undefined && this.now() - missingAt < this.recheckMissingMs) return false;
        return (await this.problem(chainId, mechanismById(id)).catch(() => 'unread')) === undefined;
      }),
    );
    return ids.filter((_, i) => served[i]);
  }
}
