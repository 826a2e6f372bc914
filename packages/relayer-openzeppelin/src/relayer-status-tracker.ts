import type { ChainTransactionRepository, ExternalTransaction, ProviderProgress } from '@facilitator/db';
import type { OpenZeppelinRelayerClient } from './api/relayer-api-client';
import type { EvmTransactionResponse, RelayerTransactionStatus } from './api/relayer-api-types';
import { OPENZEPPELIN_RELAYER_PROVIDER } from './provider-name';
import type { RelayerBinding } from './relayer-bindings';

/** The relayer's statuses that mean a version reached the network. */
const BROADCAST: ReadonlySet<RelayerTransactionStatus> = new Set(['submitted', 'mined', 'confirmed']);

/** The relayer's statuses that end a transaction without success. */
export const ENDED_WITHOUT_SUCCESS: ReadonlySet<RelayerTransactionStatus> = new Set(['failed', 'expired', 'canceled']);

/** Asks the relayer about a transaction it accepted and stores what it says (status, newest hash, nonce). */
export class RelayerStatusTracker {
  constructor(
    private readonly client: OpenZeppelinRelayerClient,
    private readonly store: ChainTransactionRepository,
  ) {}

  async refresh(row: ExternalTransaction, binding: RelayerBinding): Promise<{ row: ExternalTransaction; relayer: EvmTransactionResponse }> {
    if (!row.providerTransactionId) throw new Error(`chain transaction ${row.id} has no relayer id to ask about`);
    const relayer = await this.client.getTransaction(binding.id, row.providerTransactionId);
    const stored = await this.store.external.recordProgress(row.id, progressOf(relayer));
    // null: mined or given up meanwhile (another process): the stored outcome wins
    return { row: stored ?? (await this.store.external.get(row.id, OPENZEPPELIN_RELAYER_PROVIDER)), relayer };
  }
}

export function progressOf(relayer: EvmTransactionResponse): ProviderProgress {
  return {
    providerStatus: relayer.status,
    reason: relayer.status_reason ?? null,
    hash: relayer.hash ? relayer.hash.toLowerCase() : null,
    nonce: relayer.nonce === null || relayer.nonce === undefined ? null : BigInt(relayer.nonce),
    broadcast: BROADCAST.has(relayer.status),
  };
}

/** Ended before it was ever signed: no nonce, no hash, so nothing of it can reach the chain. */
export function endedUnsigned(relayer: EvmTransactionResponse): boolean {
  return ENDED_WITHOUT_SUCCESS.has(relayer.status) && !relayer.hash && (relayer.nonce === null || relayer.nonce === undefined);
}
