/**
 * The wire types of OpenZeppelin Relayer's REST API (v1) that sending uses, as its server defines them
 * (openzeppelin-relayer: src/models/api_response.rs, src/models/transaction/request/evm.rs,
 * src/models/transaction/response.rs, src/models/transaction/repository.rs, src/models/notification/
 * webhook_notification.rs). Field names are the server's (snake_case).
 */

/**
 * A transaction's status on the relayer. `pending`: stored, not yet signed (no nonce, no hash); `sent`:
 * signed, nonce and hash assigned; `submitted`: handed to the network; `mined`: in a block, fewer than the
 * network's required confirmations; `confirmed`: enough of them. `failed`: refused before signing, or
 * mined and reverted (its receipt says which), or given up; `expired`: past its `valid_until`; `canceled`:
 * cancelled before signing, or replaced on chain by a no-op transaction to itself that was mined.
 */
export type RelayerTransactionStatus = 'pending' | 'sent' | 'submitted' | 'mined' | 'confirmed' | 'failed' | 'expired' | 'canceled';

/** The relayer's own speeds, for pricing by the relayer instead of explicit fees. */
export type RelayerSpeed = 'fastest' | 'fast' | 'average' | 'safeLow';

/** Every answer: `{ success, data, error }`, plus `pagination` on lists. */
export interface RelayerApiEnvelope<T> {
  success: boolean;
  data: T | null;
  error?: string | null;
  pagination?: { current_page: number; per_page: number; total_items: number };
}

/** POST /api/v1/relayers/{relayer_id}/transactions, an EVM relayer's body: one pricing only (speed, gas_price, or both EIP-1559 fees). */
export interface EvmTransactionRequest {
  to: string;
  /** wei */
  value: bigint;
  data: string;
  gas_limit?: bigint;
  speed?: RelayerSpeed;
  gas_price?: bigint;
  max_fee_per_gas?: bigint;
  max_priority_fee_per_gas?: bigint;
  /** RFC 3339: past it the relayer stops trying (replacing a signed one with a no-op) */
  valid_until?: string;
}

export interface EvmTransactionResponse {
  id: string;
  /** the newest signed version's hash; absent while `pending` */
  hash?: string | null;
  status: RelayerTransactionStatus;
  status_reason?: string | null;
  /** RFC 3339, the relayer's clock */
  created_at: string;
  sent_at?: string | null;
  confirmed_at?: string | null;
  gas_price?: string | null;
  gas_limit?: number | null;
  /** assigned when it is signed */
  nonce?: number | null;
  value: string;
  from: string;
  to?: string | null;
  relayer_id: string;
  data?: string | null;
  max_fee_per_gas?: string | null;
  max_priority_fee_per_gas?: string | null;
  speed?: RelayerSpeed | null;
  /** cancelled by a user: being replaced by a no-op until that is mined (then `canceled`) */
  is_canceled?: boolean | null;
}

/** GET /api/v1/relayers/{relayer_id} (the parts sending reads). */
export interface RelayerResponse {
  id: string;
  name: string;
  network: string;
  network_type: 'evm' | 'solana' | 'stellar';
  paused: boolean;
  /** the signer's address */
  address?: string;
  system_disabled?: boolean;
  notification_id?: string | null;
}

/** What the relayer POSTs to a notification's URL, signed in the `X-Signature` header (see webhook-signature.ts). */
export interface RelayerWebhookNotification {
  id: string;
  /** `transaction_update` for a transaction's status change */
  event: string;
  /** `payload_type: "transaction"` with the transaction's fields beside it, for a transaction update */
  payload: { payload_type: string } & Partial<EvmTransactionResponse>;
  timestamp: string;
}
