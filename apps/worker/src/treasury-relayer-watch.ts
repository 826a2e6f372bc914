import { TransactionSendingError, type TransactionProvider } from '@facilitator/evm-sending';
import type { Logger } from '@facilitator/logging';
import type { OpenZeppelinRelayerClient } from '@facilitator/relayer-openzeppelin';

/** Refused while the relayer server has a relayer signing as the treasury that the operator did not allow. */
export class TreasuryRelayerPresentError extends TransactionSendingError {
  // the job retries with its backoff (and is parked for an operator after its attempts): sending resumes once it is gone
  readonly retryable = true;
}

/** The ids of the relayers the API key reaches whose signer is the treasury. */
export async function treasuryRelayerIdsOf(client: Pick<OpenZeppelinRelayerClient, 'listRelayers'>, treasury: string): Promise<string[]> {
  const listed = await client.listRelayers();
  return listed.filter((r) => r.address?.toLowerCase() === treasury.toLowerCase()).map((r) => r.id);
}

/**
 * The start-up check (relayer-server-keys.ts) asked once whether OZ_RELAYER_API_KEY reaches a relayer that signs
 * as the treasury; but that key can create relayers and signers later. This asks again every EXECUTOR_RECHECK_MS
 * and, while such a relayer exists without OZ_RELAYER_ALLOW_TREASURY=true, this worker sends nothing new through
 * the server (an error is logged once when it appears, and once when it is gone): the key has become a treasury
 * credential, and what it sends is no longer only what the worker asked for (issue 40, review of item 6).
 */
export class TreasuryRelayerWatch {
  private present: string[] = [];
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly client: Pick<OpenZeppelinRelayerClient, 'listRelayers'>,
    private readonly treasury: string,
    private readonly logger: Logger,
  ) {}

  /** Whether sending is stopped now. */
  get stopped(): boolean {
    return this.present.length > 0;
  }

  start(intervalMs: number): void {
    this.timer = setInterval(() => void this.check(), intervalMs).unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** One reading; a server that does not answer leaves the last reading as it was (the sends fail on their own then). */
  async check(): Promise<void> {
    let ids: string[];
    try {
      ids = await treasuryRelayerIdsOf(this.client, this.treasury);
    } catch (error) {
      this.logger.warn('could not list the OpenZeppelin relayers to look for a treasury relayer', { err: (error as Error).message });
      return;
    }
    if (ids.length > 0 && !this.stopped) {
      this.logger.error('a relayer of the OpenZeppelin Relayer now signs as the treasury: sending stopped until it is removed (or OZ_RELAYER_ALLOW_TREASURY=true)', {
        treasury: this.treasury,
        treasury_relayers: ids,
        canDo: "OZ_RELAYER_API_KEY can transferFrom every merchant's whole allowance to any address through it",
      });
    } else if (ids.length === 0 && this.stopped) {
      this.logger.error('the treasury relayer is gone from the OpenZeppelin Relayer: sending resumes', { treasury: this.treasury, removed: this.present });
    }
    this.present = ids;
  }

  /**
   * The provider, refusing new transactions while sending is stopped. A transaction already signed is still
   * found and awaited (its outcome is on chain whatever the server does).
   */
  guard(provider: TransactionProvider): TransactionProvider {
    return {
      submit: async (request) => {
        if (this.stopped && !(await provider.find(request.settlementId, request.purpose))) {
          throw new TreasuryRelayerPresentError(`sending stopped: relayer ${this.present.join(', ')} of the OpenZeppelin Relayer signs as the treasury`);
        }
        return provider.submit(request);
      },
      find: (settlementId, purpose) => provider.find(settlementId, purpose),
      hasAny: (settlementId, purpose) => provider.hasAny(settlementId, purpose),
      waitForOutcome: (id, confirmations) => provider.waitForOutcome(id, confirmations),
      networkFee: (chainId) => provider.networkFee(chainId),
    };
  }
}
