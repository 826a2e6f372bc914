import { ApiClient, ApiError } from '../api-client';
import { CliError } from '../errors';
import { table } from '../format';
import type { Output } from '../output';

export interface StatusFlags {
  api: string;
  apiKey?: string;
  settleKey?: string;
  json?: boolean;
}

type Record_ = {
  id: string;
  type: string;
  status: string;
  state?: string;
  created_at: string;
  updated_at: string;
  transaction_hash: string | null;
  settled_at?: string | null;
  chain?: string;
  details: Record<string, unknown>;
  error?: { code: string; message: string; details?: Record<string, unknown> };
};

/** `facilitator status <id>`: a verification (`ver_…`) or settlement (`stl_…`) record from the API. */
export async function statusCommand(id: string, flags: StatusFlags, out: Output): Promise<number> {
  const path = id.startsWith('ver_')
    ? `/v1/verifications/${encodeURIComponent(id)}`
    : id.startsWith('stl_')
      ? `/v1/settlements/${encodeURIComponent(id)}`
      : undefined;
  if (!path) throw new CliError(`${JSON.stringify(id.slice(0, 80))} is not a verification (ver_…) or settlement (stl_…) id`);
  const api = new ApiClient(flags.api, flags.apiKey, flags.settleKey);
  let record: Record_;
  try {
    record = (await api.get<Record_>(path)).body;
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) throw new CliError(`not found: ${err.apiMessage}`);
    if (err instanceof ApiError && err.status === 401) {
      throw new CliError(`the API wants an API key: ${err.apiMessage} (pass --api-key or set FACILITATOR_API_KEY; a merchant: FACILITATOR_SETTLE_KEY)`);
    }
    throw err;
  }
  if (flags.json) {
    out.line(JSON.stringify(record, null, 2));
    return 0;
  }
  out.line(table(record.type === 'settlement' ? settlementRows(record) : verificationRows(record)));
  if (record.error) {
    out.line(table([['error', `${record.error.code}: ${record.error.message}`]]));
    const details = record.error.details ?? {};
    for (const key of ['reason', 'impact', 'approval_command', 'approval_command_cast']) {
      if (typeof details[key] === 'string') out.line(`  ${key.replace(/_/g, ' ')}: ${details[key] as string}`);
    }
  }
  return 0;
}

const text = (value: unknown) => (value === null || value === undefined ? '-' : String(value));

function settlementRows(r: Record_): Array<[string, string]> {
  const d = r.details;
  return [
    ['settlement', r.id],
    ['status', `${r.status} (state ${text(r.state)})`],
    ['verification', text(d.verification_id)],
    ['payer', text(d.payer_address)],
    ['merchant', text(d.destination_address)],
    ['amount', `${text(d.amount)} units (settled ${text(d.settled_amount)})`],
    ['fee', `${text(d.fee_amount)} units, ${text(d.fee_collection_status)}${d.fee_tx_hash ? ` in ${text(d.fee_tx_hash)}` : ''}`],
    ['transfer tx', text(d.settlement_tx_hash)],
    ['created', r.created_at],
    ['settled', text(r.settled_at)],
  ];
}

function verificationRows(r: Record_): Array<[string, string]> {
  const d = r.details;
  const failure = d.failure as { message?: string } | undefined;
  return [
    ['verification', r.id],
    ['status', r.status + (failure?.message ? ` (${failure.message})` : '')],
    ['chain', text(r.chain)],
    ['payer', text(d.payer_address)],
    ['merchant', text(d.seller_address)],
    ['amount', `${text(d.verified_amount)} units (expected ${text(d.expected_amount)})`],
    ['token', text(d.token)],
    ['nonce', text(d.nonce)],
    ['settled by', text(r.transaction_hash)],
    ['created', r.created_at],
  ];
}
