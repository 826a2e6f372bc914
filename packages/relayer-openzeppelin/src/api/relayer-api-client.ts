import { createHmac } from 'node:crypto';
import { RelayerRequestRefusedError, RelayerUnavailableError } from '../errors';
import type { EvmTransactionRequest, EvmTransactionResponse, RelayerApiEnvelope, RelayerResponse } from './relayer-api-types';

export interface RelayerApiClientOptions {
  /** the relayer's origin, e.g. `https://relayer.internal:8080` (the `/api/v1` prefix is added here) */
  baseUrl: string;
  /** the relayer's API key, sent as `Authorization: Bearer <key>` */
  apiKey: string;
  /** a request not answered within this fails (RelayerUnavailableError); default 10 s */
  requestTimeoutMs?: number;
}

interface TransactionPage {
  items: EvmTransactionResponse[];
  totalItems: number;
}

// connection errors that prove the request never reached the relayer's HTTP handler
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

/**
 * OpenZeppelin Relayer's REST API, the four calls sending needs, over Node's fetch. (Not @openzeppelin/relayer-sdk:
 * it is AGPL-3.0-or-later, which linking into the worker would extend to it, and it is generated from an
 * older API description than the server's: no status filter on lists, no `is_canceled`, fees typed as JS
 * numbers.) Every failure is one of two errors: RelayerRequestRefusedError (the relayer answered no and
 * created nothing) or RelayerUnavailableError (retryable; `maybeReceived` when it may have acted).
 */
export class OpenZeppelinRelayerClient {
  private readonly base: string;
  private readonly timeoutMs: number;

  constructor(private readonly options: RelayerApiClientOptions) {
    this.base = `${options.baseUrl.replace(/\/+$/, '')}/api/v1`;
    this.timeoutMs = options.requestTimeoutMs ?? 10_000;
    if (!(this.timeoutMs > 0)) throw new Error(`requestTimeoutMs must be positive, got ${options.requestTimeoutMs}`);
  }

  get requestTimeoutMs(): number {
    return this.timeoutMs;
  }

  /**
   * HMAC-SHA256 of a stored row's digest keyed by the API key: the one secret only the worker holds in this
   * mode (and whoever holds it can send through the relayer anyway), so a row a database writer inserted or
   * rewrote is never handed to the relayer (issue 40).
   */
  rowAuthenticator(digest: Uint8Array): string {
    return '0x' + createHmac('sha256', this.options.apiKey).update(digest).digest('hex');
  }

  /** GET /relayers/{relayer_id}: the relayer's network type, address and state. */
  async getRelayer(relayerId: string): Promise<RelayerResponse> {
    return this.call<RelayerResponse>('GET', `/relayers/${encodeURIComponent(relayerId)}`);
  }

  /**
   * GET /relayers?page=&per_page=, every page: each relayer the API key reaches, whether or not it is
   * configured here (whoever holds the key can send through any of them).
   */
  async listRelayers(perPage = 100): Promise<RelayerResponse[]> {
    const all: RelayerResponse[] = [];
    for (let page = 1; ; page++) {
      const { data, pagination } = await this.request<RelayerResponse[]>('GET', `/relayers?page=${page}&per_page=${perPage}`);
      const items = data ?? [];
      all.push(...items);
      if (items.length === 0 || all.length >= (pagination?.total_items ?? all.length)) return all;
    }
  }

  /** POST /relayers/{relayer_id}/transactions: the relayer stores it (`pending`) and answers with its id. */
  async sendTransaction(relayerId: string, request: EvmTransactionRequest): Promise<EvmTransactionResponse> {
    return this.call<EvmTransactionResponse>('POST', `/relayers/${encodeURIComponent(relayerId)}/transactions`, request);
  }

  /** GET /relayers/{relayer_id}/transactions/{transaction_id} */
  async getTransaction(relayerId: string, transactionId: string): Promise<EvmTransactionResponse> {
    return this.call<EvmTransactionResponse>('GET', `/relayers/${encodeURIComponent(relayerId)}/transactions/${encodeURIComponent(transactionId)}`);
  }

  /** GET /relayers/{relayer_id}/transactions?page=&per_page=: newest first (by the relayer's created_at); pages start at 1. */
  async listTransactions(relayerId: string, page: number, perPage: number): Promise<TransactionPage> {
    const path = `/relayers/${encodeURIComponent(relayerId)}/transactions?page=${page}&per_page=${perPage}`;
    const { data, pagination } = await this.request<EvmTransactionResponse[]>('GET', path);
    const items = data ?? [];
    return { items, totalItems: pagination?.total_items ?? items.length };
  }

  private async call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const { data } = await this.request<T>(method, path, body);
    if (data === null || data === undefined) throw new RelayerUnavailableError(`${method} ${path} answered success without data`, 200, method === 'POST');
    return data;
  }

  private async request<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<RelayerApiEnvelope<T>> {
    // a POST that may have reached the relayer may have created a transaction
    const mutating = method === 'POST';
    let response: Response;
    try {
      response = await fetch(`${this.base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${this.options.apiKey}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : jsonWithIntegers(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      const code = errorCode(error);
      const timedOut = (error as { name?: string }).name === 'TimeoutError';
      const what = timedOut ? `no answer within ${this.timeoutMs} ms` : (code ?? describe(error));
      throw new RelayerUnavailableError(`${method} ${path}: ${what}`, undefined, mutating && !(code && NOT_SENT_CODES.has(code)), { cause: error });
    }
    let envelope: RelayerApiEnvelope<T> | undefined;
    let text = '';
    try {
      text = await response.text();
      envelope = JSON.parse(text) as RelayerApiEnvelope<T>;
    } catch (error) {
      if (response.ok) throw new RelayerUnavailableError(`${method} ${path}: unreadable answer (${describe(error)})`, response.status, mutating, { cause: error });
    }
    const message = envelope?.error ?? (envelope as { message?: string } | undefined)?.message ?? (text.slice(0, 200) || response.statusText);
    // the rate limiter answers before any handler runs: nothing was created
    if (response.status === 429) throw new RelayerUnavailableError(`${method} ${path}: HTTP 429 ${message}`, 429, false);
    if (response.status >= 500) throw new RelayerUnavailableError(`${method} ${path}: HTTP ${response.status} ${message}`, response.status, mutating);
    if (!response.ok || !envelope || envelope.success !== true) throw new RelayerRequestRefusedError(response.status, message);
    return envelope;
  }
}

/** JSON with bigints written as plain integers (the relayer reads u64/u128 numbers, past 2^53 for wei). */
export function jsonWithIntegers(value: unknown): string {
  const marked = JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? `\u0000bigint:${v.toString()}` : v));
  return marked.replace(/"\\u0000bigint:(-?\d+)"/g, '$1');
}

function errorCode(error: unknown): string | undefined {
  const e = error as { code?: unknown; cause?: { code?: unknown; cause?: { code?: unknown } } };
  for (const code of [e?.cause?.code, e?.cause?.cause?.code, e?.code]) if (typeof code === 'string') return code;
  return undefined;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
