import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createProvider, waitForRpc } from '@facilitator/evm-chain';
import type { EvmTransactionResponse, RelayerApiEnvelope, RelayerSpeed, RelayerWebhookNotification } from '../api/relayer-api-types';
import { jsonWithIntegers } from '../api/relayer-api-client';
import { signRelayerWebhook } from '../webhook-signature';
import { LocalBadRequest, LocalRelayer, type LocalRelayerFaultState, type LocalRelayerTransaction, type LocalSendRequest } from './local-relayer';

export interface LocalRelayerServerOptions {
  /** the node it sends to (anvil) */
  rpcUrl: string;
  /** its API key: every request must carry `Authorization: Bearer <apiKey>` */
  apiKey: string;
  /** the key of its one relayer (`relayerId`, default "relayer-1"); or give `relayers` */
  privateKey?: string;
  relayerId?: string;
  relayers?: ReadonlyArray<{ id: string; privateKey: string }>;
  /** its notification: each status change is POSTed there, signed with `signingKey` (X-Signature) */
  webhook?: { url: string; signingKey: string };
  /** confirmations before `confirmed`; default 1 */
  confirmations?: number;
  /** how often it reads receipts; default 50 ms */
  statusIntervalMs?: number;
}

export interface LocalRelayerWebhookDelivery {
  notification: RelayerWebhookNotification;
  /** the receiver's HTTP status, or the error when it could not be reached */
  status: number | string;
}

/** Faults a test injects into the local relayer. */
export interface LocalRelayerFaults {
  /** The next `n` sends are stored and processed, but the connection is dropped before the answer: the crash window. */
  dropResponses(n?: number): void;
  /** The next `n` sends answer HTTP `status` (default 500); with `afterCreate` the transaction is stored and processed first. */
  failSends(n?: number, options?: { status?: number; afterCreate?: boolean }): void;
  /** The next `n` transactions fail before signing: `failed`, no nonce, no hash. */
  failBeforeSigning(n?: number, reason?: string): void;
  /** New transactions stay `pending` until `release`. */
  hold(): void;
  release(): void;
  /** Every GET answers after `ms` (a slow relayer). */
  delayReads(ms: number): void;
}

export interface LocalRelayerServer {
  /** origin, e.g. http://127.0.0.1:41234 (the API is under /api/v1) */
  url: string;
  apiKey: string;
  /** the first relayer's id and address */
  relayerId: string;
  address: string;
  relayers: Array<{ id: string; address: string }>;
  faults: LocalRelayerFaults;
  /** Every transaction a relayer created, oldest first (all relayers when no id is given). */
  transactions(relayerId?: string): LocalRelayerTransaction[];
  /** Every notification sent, oldest first. */
  webhookDeliveries: LocalRelayerWebhookDelivery[];
  /** Resolves when every transaction created so far was signed and handed over (or failed). */
  idle(): Promise<void>;
  /** Creates a relayer while the server runs, as the API key can on a real one (listed from now on). */
  addRelayer(account: { id: string; privateKey: string }): { id: string; address: string };
  /** Deletes a relayer while the server runs. */
  removeRelayer(id: string): void;
  stop(): Promise<void>;
}

const DEFAULT_RELAYER_ID = 'relayer-1';
const UNAUTHORIZED = '{"success":false,"code":401,"error":"Unauthorized","message":"Unauthorized"}';

/**
 * A local server speaking OpenZeppelin Relayer's REST API (v1) for EVM relayers, for tests: the hosted or
 * self-run relayer cannot run here. It keeps the real one's envelope (`{ success, data, error }`, with
 * `pagination` on lists), its bearer-key check (answering 401 with the real body), its routes
 * (GET /api/v1/relayers/{id}, POST and GET /api/v1/relayers/{id}/transactions, GET
 * /api/v1/relayers/{id}/transactions/{tx_id}; trailing slashes trimmed), its request validation (one pricing
 * only, both EIP-1559 fees), its statuses, and its signed notifications; and it really signs with its own
 * key and sends to the node, with its own nonces.
 */
export async function startOpenZeppelinRelayerServer(options: LocalRelayerServerOptions): Promise<LocalRelayerServer> {
  const accounts = options.relayers ?? (options.privateKey ? [{ id: options.relayerId ?? DEFAULT_RELAYER_ID, privateKey: options.privateKey }] : []);
  if (accounts.length === 0) throw new Error('startOpenZeppelinRelayerServer needs privateKey or relayers');
  const chainId = await waitForRpc(options.rpcUrl, 5_000);
  const rpc = createProvider(options.rpcUrl, chainId);
  const deliveries: LocalRelayerWebhookDelivery[] = [];
  const pendingWebhooks = new Set<Promise<void>>();
  let releaseGate: () => void = () => {};
  const state: LocalRelayerFaultState = { gate: Promise.resolve(), failBeforeSigning: 0, failBeforeSigningReason: '' };
  const counters = { drop: 0, fail: 0, failStatus: 500, failAfterCreate: false, readDelayMs: 0 };

  const notify = (tx: LocalRelayerTransaction) => {
    if (!options.webhook) return;
    const { url, signingKey } = options.webhook;
    const notification: RelayerWebhookNotification = {
      id: crypto.randomUUID(),
      event: 'transaction_update',
      payload: { payload_type: 'transaction', ...toResponse(tx) },
      timestamp: new Date().toISOString(),
    };
    const body = JSON.stringify(notification);
    const delivery = fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-signature': signRelayerWebhook(body, signingKey) },
      body,
      signal: AbortSignal.timeout(5_000),
    }).then(
      async (response) => {
        await response.arrayBuffer();
        deliveries.push({ notification, status: response.status });
      },
      (error: unknown) => {
        deliveries.push({ notification, status: String(error) });
      },
    );
    pendingWebhooks.add(delivery);
    void delivery.finally(() => pendingWebhooks.delete(delivery));
  };

  const relayers = new Map(accounts.map((a) => [a.id, new LocalRelayer(a.id, a.privateKey, rpc, chainId, `local-${chainId}`, state, notify)]));
  const confirmations = options.confirmations ?? 1;
  let checking = false;
  const statusLoop = setInterval(() => {
    if (checking) return;
    checking = true;
    void Promise.all([...relayers.values()].map((r) => r.checkStatuses(confirmations)))
      .catch(() => {})
      .finally(() => (checking = false));
  }, options.statusIntervalMs ?? 50);

  const server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => send(res, 500, { success: false, data: null, error: `Internal Server Error: ${String(error)}` }));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const authorization = req.headersDistinct.authorization ?? [];
    if (authorization.length !== 1 || authorization[0] !== `Bearer ${options.apiKey}`) {
      res.writeHead(401, { 'content-type': 'application/json' }).end(UNAUTHORIZED);
      return;
    }
    const url = new URL(req.url ?? '/', 'http://relayer');
    const path = url.pathname.replace(/\/+$/, '');
    if (path === '/api/v1/relayers') {
      // every relayer the API key reaches (the real server pages this list too)
      if (req.method !== 'GET') return send(res, 405, { success: false, data: null, error: 'Method Not Allowed' });
      const page = Math.max(1, Number(url.searchParams.get('page') ?? 1) || 1);
      const perPage = Math.max(1, Number(url.searchParams.get('per_page') ?? 10) || 10);
      const all = [...relayers.values()].map((r) => r.describe());
      const items = all.slice((page - 1) * perPage, page * perPage);
      return send(res, 200, { success: true, data: items, error: null, pagination: { current_page: page, per_page: perPage, total_items: all.length } });
    }
    const match = /^\/api\/v1\/relayers\/([^/]+)(\/transactions(?:\/([^/]+))?)?$/.exec(path);
    if (!match) return send(res, 404, { success: false, data: null, error: 'Not Found' });
    const relayer = relayers.get(decodeURIComponent(match[1]));
    if (!relayer) return send(res, 404, { success: false, data: null, error: `Relayer with ID ${match[1]} not found` });
    if (req.method === 'GET' && counters.readDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, counters.readDelayMs));
    if (!match[2]) {
      if (req.method !== 'GET') return send(res, 405, { success: false, data: null, error: 'Method Not Allowed' });
      return send(res, 200, { success: true, data: relayer.describe(), error: null });
    }
    const transactionId = match[3] ? decodeURIComponent(match[3]) : undefined;
    if (transactionId !== undefined) {
      if (req.method !== 'GET') return send(res, 405, { success: false, data: null, error: 'Method Not Allowed' });
      const tx = relayer.get(transactionId);
      if (!tx) return send(res, 404, { success: false, data: null, error: `Transaction with ID ${transactionId} not found` });
      return send(res, 200, { success: true, data: toResponse(tx), error: null });
    }
    if (req.method === 'GET') {
      const page = Math.max(1, Number(url.searchParams.get('page') ?? 1) || 1);
      const perPage = Math.max(1, Number(url.searchParams.get('per_page') ?? 10) || 10);
      const all = relayer.list();
      const items = all.slice((page - 1) * perPage, page * perPage).map(toResponse);
      return send(res, 200, { success: true, data: items, error: null, pagination: { current_page: page, per_page: perPage, total_items: all.length } });
    }
    if (req.method !== 'POST') return send(res, 405, { success: false, data: null, error: 'Method Not Allowed' });
    let request: LocalSendRequest;
    try {
      request = parseSendRequest(await readBody(req));
    } catch (error) {
      if (error instanceof LocalBadRequest) return send(res, 400, { success: false, data: null, error: error.message });
      throw error;
    }
    if (counters.fail > 0) {
      counters.fail--;
      if (counters.failAfterCreate) relayer.create(request);
      return send(res, counters.failStatus, { success: false, data: null, error: 'Internal Server Error' });
    }
    const tx = relayer.create(request);
    if (counters.drop > 0) {
      counters.drop--;
      // stored and processed, and the answer never arrives: what a crash (or a lost connection) between
      // the relayer accepting it and us storing its id looks like
      req.socket.destroy();
      return;
    }
    return send(res, 200, { success: true, data: toResponse(tx), error: null });
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const first = relayers.values().next().value!;

  return {
    url: `http://127.0.0.1:${port}`,
    apiKey: options.apiKey,
    relayerId: first.id,
    address: first.address,
    relayers: [...relayers.values()].map((r) => ({ id: r.id, address: r.address })),
    webhookDeliveries: deliveries,
    faults: {
      dropResponses: (n = 1) => void (counters.drop = n),
      failSends: (n = 1, o = {}) => {
        counters.fail = n;
        counters.failStatus = o.status ?? 500;
        counters.failAfterCreate = o.afterCreate ?? false;
      },
      failBeforeSigning: (n = 1, reason = 'Transaction in Pending state for over 1 minutes') => {
        state.failBeforeSigning = n;
        state.failBeforeSigningReason = reason;
      },
      hold: () => {
        state.gate = new Promise<void>((resolve) => (releaseGate = resolve));
      },
      release: () => {
        releaseGate();
        state.gate = Promise.resolve();
      },
      delayReads: (ms) => void (counters.readDelayMs = ms),
    },
    transactions: (relayerId) =>
      relayerId === undefined ? [...relayers.values()].flatMap((r) => r.list().reverse()) : [...(relayers.get(relayerId)?.list() ?? [])].reverse(),
    idle: async () => {
      await Promise.all([...relayers.values()].map((r) => r.idle()));
    },
    addRelayer: (account) => {
      const relayer = new LocalRelayer(account.id, account.privateKey, rpc, chainId, `local-${chainId}`, state, notify);
      relayers.set(account.id, relayer);
      return { id: relayer.id, address: relayer.address };
    },
    removeRelayer: (id) => void relayers.delete(id),
    stop: async () => {
      clearInterval(statusLoop);
      releaseGate();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await Promise.all([...relayers.values()].map((r) => r.idle()));
      await Promise.all(pendingWebhooks);
      rpc.destroy();
    },
  };
}

function toResponse(tx: LocalRelayerTransaction): EvmTransactionResponse {
  const { hashes: _hashes, ...response } = tx;
  return response;
}

function send(res: ServerResponse, status: number, envelope: RelayerApiEnvelope<unknown>): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(jsonWithIntegers(envelope));
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new LocalBadRequest('Json deserialize error: invalid JSON');
  }
}

const SPEEDS: readonly RelayerSpeed[] = ['fastest', 'fast', 'average', 'safeLow'];

/** The relayer's validation of an EVM send (src/models/transaction/request/evm.rs). */
function parseSendRequest(body: unknown): LocalSendRequest {
  if (typeof body !== 'object' || body === null) throw new LocalBadRequest('Invalid transaction request');
  const b = body as Record<string, unknown>;
  const integer = (name: string): bigint | null => {
    const v = b[name];
    if (v === undefined || v === null) return null;
    if (typeof v !== 'number' && typeof v !== 'string') throw new LocalBadRequest(`invalid ${name}`);
    try {
      const n = BigInt(v);
      if (n < 0n) throw new Error();
      return n;
    } catch {
      throw new LocalBadRequest(`invalid ${name}`);
    }
  };
  const value = integer('value');
  if (value === null) throw new LocalBadRequest('missing field `value`');
  const to = typeof b.to === 'string' ? b.to : null;
  const data = typeof b.data === 'string' ? b.data : null;
  if (to === null && data === null) throw new LocalBadRequest('Both txs `to` and `data` fields are missing. At least one of them has to be set.');
  const speed = b.speed === undefined || b.speed === null ? null : (b.speed as RelayerSpeed);
  if (speed !== null && !SPEEDS.includes(speed)) throw new LocalBadRequest(`unknown variant \`${String(speed)}\``);
  const request: LocalSendRequest = {
    to,
    value,
    data,
    gas_limit: integer('gas_limit'),
    speed,
    gas_price: integer('gas_price'),
    max_fee_per_gas: integer('max_fee_per_gas'),
    max_priority_fee_per_gas: integer('max_priority_fee_per_gas'),
  };
  const eip1559 = request.max_fee_per_gas !== null || request.max_priority_fee_per_gas !== null;
  const kinds = [eip1559, request.gas_price !== null, speed !== null].filter(Boolean).length;
  if (kinds === 0) throw new LocalBadRequest('Transaction must specify either gasPrice, speed, or EIP1559 parameters');
  if (kinds > 1) throw new LocalBadRequest('Cannot mix different transaction types. Use either gasPrice, speed, or EIP1559 parameters');
  if (eip1559) {
    if (request.max_fee_per_gas === null || request.max_priority_fee_per_gas === null) {
      throw new LocalBadRequest('EIP1559 transactions require both maxFeePerGas and maxPriorityFeePerGas');
    }
    if (request.max_fee_per_gas < request.max_priority_fee_per_gas) throw new LocalBadRequest('maxFeePerGas must be greater than or equal to maxPriorityFeePerGas');
  }
  return request;
}
