import { Client } from 'pg';

/** The channel the settlements' triggers notify (migration 20261128233000_settlement_progress_notify). */
export const SETTLEMENT_PROGRESS_CHANNEL = 'settlement_progress';

/** What one notification says changed. */
export interface SettlementProgressWake {
  /** settlements whose state, own transaction hash or waiting reason changed */
  settlementIds: string[];
  /** a batch's settle transaction got a hash: every settlement waiting for its transaction may have one now */
  batchSigned: boolean;
}

export interface SettlementProgressListenerOptions {
  /** the first reconnection waits this long, doubling up to 10 s (default 250 ms) */
  reconnectMs?: number;
}

/** Reads one notification's payload (see the migration): comma-separated ids, or `b:<batch id>`. */
export function parseProgressPayload(payload: string | undefined): SettlementProgressWake {
  if (!payload) return { settlementIds: [], batchSigned: false };
  if (payload.startsWith('b:')) return { settlementIds: [], batchSigned: true };
  return { settlementIds: payload.split(','), batchSigned: false };
}

/**
 * One LISTEN connection per process to the settlements' progress channel. Postgres sends a notification when
 * a settlement's progress changes (triggers on the worker's own writes, at commit), so waiting requests are
 * woken by the change itself rather than by polling. `live` says whether the connection is listening: while it
 * is not (Postgres restarting, a pooler without LISTEN), readers fall back to polling; on every (re)connection
 * `onLive` fires, since what changed while the connection was away was not heard.
 */
export class SettlementProgressListener {
  private client?: Client;
  private closed = false;
  private retryMs: number;
  private retryTimer?: NodeJS.Timeout;
  private wakeHandlers: Array<(wake: SettlementProgressWake) => void> = [];
  private liveHandlers: Array<(live: boolean) => void> = [];
  live = false;

  constructor(
    private readonly databaseUrl: string,
    private readonly options: SettlementProgressListenerOptions = {},
  ) {
    this.retryMs = options.reconnectMs ?? 250;
  }

  onWake(handler: (wake: SettlementProgressWake) => void): void {
    this.wakeHandlers.push(handler);
  }

  /** Called with true when listening starts (again), false when the connection is lost. */
  onLive(handler: (live: boolean) => void): void {
    this.liveHandlers.push(handler);
  }

  /** Connects and listens; never throws (a failure schedules a retry, and readers poll meanwhile). */
  async start(): Promise<void> {
    if (this.closed || this.client) return;
    const client = new Client({ connectionString: this.databaseUrl });
    this.client = client;
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    client.on('notification', (message) => {
      if (message.channel !== SETTLEMENT_PROGRESS_CHANNEL) return;
      const wake = parseProgressPayload(message.payload);
      for (const handler of this.wakeHandlers) handler(wake);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${SETTLEMENT_PROGRESS_CHANNEL}`);
    } catch {
      this.lost(client);
      return;
    }
    if (this.client !== client || this.closed) return;
    this.retryMs = this.options.reconnectMs ?? 250;
    this.setLive(true);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = undefined;
    this.setLive(false);
    await client?.end().catch(() => undefined);
  }

  private lost(client: Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    client.end().catch(() => undefined);
    this.setLive(false);
    if (this.closed) return;
    this.retryTimer = setTimeout(() => void this.start(), this.retryMs);
    this.retryTimer.unref();
    this.retryMs = Math.min(this.retryMs * 2, 10_000);
  }

  private setLive(live: boolean): void {
    if (this.live === live) return;
    this.live = live;
    for (const handler of this.liveHandlers) handler(live);
  }
}
