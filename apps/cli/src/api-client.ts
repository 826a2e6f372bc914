import { CliError } from './errors';

export const DEFAULT_API_URL = 'http://127.0.0.1:4020';

export interface ApiAnswer<T = Record<string, unknown>> {
  status: number;
  body: T;
}

/** The API's error envelope, `{ error: { code, message, details? } }`, as an exception. */
export class ApiError extends CliError {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly apiMessage: string,
    readonly details: Record<string, unknown> | undefined,
  ) {
    super(`the API answered ${status} ${code}: ${apiMessage}`);
    this.name = 'ApiError';
  }
}

/** A small client of the facilitator's REST API: JSON in and out, one-line errors. */
export class ApiClient {
  readonly baseUrl: string;

  constructor(
    baseUrl: string,
    private readonly apiKey?: string,
    /** a merchant's settle key: reads that merchant's own records */
    private readonly settleKey?: string,
  ) {
    let url: URL;
    try {
      url = new URL(baseUrl);
    } catch {
      throw new CliError(`--api is not a valid URL (got ${JSON.stringify(baseUrl.slice(0, 100))})`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CliError('--api must be an http or https URL');
    this.baseUrl = baseUrl.replace(/\/+$/, '');
  }

  get<T = Record<string, unknown>>(path: string): Promise<ApiAnswer<T>> {
    return this.request<T>('GET', path);
  }

  post<T = Record<string, unknown>>(path: string, body: unknown): Promise<ApiAnswer<T>> {
    return this.request<T>('POST', path, body);
  }

  /** Answers any 2xx; throws ApiError for an error envelope and CliError when the API cannot be reached. */
  async request<T>(method: string, path: string, body?: unknown, timeoutMs = 60_000): Promise<ApiAnswer<T>> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.apiKey) headers['x-api-key'] = this.apiKey;
    if (this.settleKey) headers.authorization = `Bearer ${this.settleKey}`;
    let response: Response;
    try {
      response = await fetch(`${this.baseUrl}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new CliError(`cannot reach the API at ${this.baseUrl}: ${cause?.code ?? cause?.message ?? (err as Error).message}`);
    }
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text === '' ? {} : JSON.parse(text);
    } catch {
      throw new CliError(`${method} ${this.baseUrl}${path} answered ${response.status} with a body that is not JSON: is --api the facilitator?`);
    }
    if (response.ok) return { status: response.status, body: parsed as T };
    const error = (parsed as { error?: { code?: string; message?: string; details?: Record<string, unknown> } }).error;
    throw new ApiError(response.status, error?.code ?? 'error', error?.message ?? (response.statusText || 'no message'), error?.details);
  }
}
