import type { Verification } from '../generated/prisma/client';
import { dateColumn } from './pg-query';

/** Column order of the hot-path INSERT; the values array follows it. */
export const VERIFICATION_COLUMNS = [
  'id', 'status', 'protocol_version', 'surface', 'chain_id', 'network', 'network_name', 'token_address', 'payer', 'merchant',
  'amount', 'expected_amount', 'nonce', 'valid_after', 'valid_before', 'signature', 'authorization_fingerprint', 'request', 'metadata',
  'webhook_url', 'failure_message', 'failure_details', 'verify_ms', 'mechanism', 'scheme', 'nonce_space', 'payload',
] as const;

type Stored = Omit<Verification, 'createdAt' | 'updatedAt'>;
type Required = 'id' | 'status' | 'protocolVersion' | 'surface' | 'chainId' | 'network' | 'networkName' | 'mechanism' | 'scheme';

/** A verification to store: the identity fields required, the rest optional (stored as NULL). */
export type NewVerificationRow = Pick<Stored, Required> & { [K in Exclude<keyof Stored, Required | 'payload'>]?: Stored[K] | null | undefined } & {
  /** null for a rejected verification: only who, what and why are kept */
  request: object | null;
  metadata?: object | null;
  failureDetails?: object | null;
  /** the mechanism's stored payload (PaymentMechanism.toStored); null for a rejected verification */
  payload?: object | null;
};

export function valuesOf(row: NewVerificationRow): unknown[] {
  return [
    row.id, row.status, row.protocolVersion, row.surface, row.chainId, row.network, row.networkName, row.tokenAddress ?? null, row.payer ?? null,
    row.merchant ?? null, row.amount ?? null, row.expectedAmount ?? null, row.nonce ?? null, row.validAfter ?? null,
    row.validBefore ?? null, row.signature ?? null, row.authorizationFingerprint ?? null, row.request == null ? null : JSON.stringify(row.request), row.metadata == null ? null : JSON.stringify(row.metadata),
    row.webhookUrl ?? null, row.failureMessage ?? null, row.failureDetails == null ? null : JSON.stringify(row.failureDetails),
    row.verifyMs ?? null, row.mechanism, row.scheme, row.nonceSpace ?? null, row.payload == null ? null : JSON.stringify(row.payload),
  ];
}

/** A row as `pg` returns it (snake_case), in Prisma's shape. */
export function fromColumns(r: Record<string, unknown>): Verification {
  return {
    id: r.id as string,
    status: r.status as Verification['status'],
    protocolVersion: r.protocol_version as number,
    surface: r.surface as string,
    chainId: r.chain_id as number,
    network: r.network as string,
    networkName: r.network_name as string,
    tokenAddress: r.token_address as string | null,
    payer: r.payer as string | null,
    merchant: r.merchant as string | null,
    amount: r.amount as string | null,
    expectedAmount: r.expected_amount as string | null,
    nonce: r.nonce as string | null,
    validAfter: r.valid_after as string | null,
    validBefore: r.valid_before as string | null,
    signature: r.signature as string | null,
    authorizationFingerprint: (r.authorization_fingerprint as string | null) ?? null,
    request: r.request as Verification['request'],
    metadata: r.metadata as Verification['metadata'],
    webhookUrl: r.webhook_url as string | null,
    failureMessage: r.failure_message as string | null,
    failureDetails: r.failure_details as Verification['failureDetails'],
    verifyMs: (r.verify_ms as number | null) ?? null,
    mechanism: r.mechanism as string,
    scheme: (r.scheme as string | undefined) ?? 'exact',
    nonceSpace: (r.nonce_space as string | null | undefined) ?? null,
    payload: (r.payload as Verification['payload'] | undefined) ?? null,
    createdAt: dateColumn(r.created_at),
    updatedAt: dateColumn(r.updated_at),
  };
}
