// Counting proxies for the work budget (test/work-budget.e2e.test.ts, docs/work-budget.md): each sits in
// front of a real service on real TCP, forwards every byte unchanged, and counts what one of our processes
// asks of that service, by reading the client's side of the protocol:
// - Postgres: the frontend messages of the wire protocol; a statement is a simple query ('Q') or an
//   execute ('E') of the extended protocol, named by the text its Parse ('P') and Bind ('B') gave it;
// - Redis: RESP commands (arrays of bulk strings), by name; a pipeline's or a MULTI's commands one by one,
//   a script (EVALSHA) as one (the server's own INFO commandstats counts the commands scripts run);
// - JSON-RPC: test/support/json-rpc-proxy.ts records every call, a batch's one by one.
import { spawnSync } from 'node:child_process';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/** What a counting proxy saw: a total, and the same total by kind (statement text, command name, method). */
export interface Tally {
  total: number;
  by: Map<string, number>;
}

export function emptyTally(): Tally {
  return { total: 0, by: new Map() };
}

function add(tally: Tally, key: string, n = 1): void {
  tally.total += n;
  tally.by.set(key, (tally.by.get(key) ?? 0) + n);
}

/** `after - before`, kind by kind (kinds that did not change are left out). */
export function tallyDelta(after: Tally, before: Tally): Tally {
  const delta = emptyTally();
  for (const [key, n] of after.by) {
    const d = n - (before.by.get(key) ?? 0);
    if (d !== 0) add(delta, key, d);
  }
  return delta;
}

function copy(tally: Tally): Tally {
  return { total: tally.total, by: new Map(tally.by) };
}

export interface RedisCounter {
  /** `redisUrl` through the proxy */
  url: string;
  /** the commands it counted since it started */
  snapshot(): Tally;
  stop(): Promise<void>;
}

/** A TCP relay to `target` that hands each connection's client bytes, in order, to a parser of its own. */
async function startCountingRelay(target: { host: string; port: number }, newParser: () => (chunk: Buffer) => void): Promise<{ port: number; stop(): Promise<void> }> {
  const open = new Set<Socket>();
  const server: Server = createServer({ pauseOnConnect: true }, (client) => {
    const upstream = createConnection(target);
    const parse = newParser();
    open.add(client).add(upstream);
    const teardown = () => {
      open.delete(client);
      open.delete(upstream);
      client.destroy();
      upstream.destroy();
    };
    for (const socket of [client, upstream]) {
      socket.on('error', teardown);
      socket.on('close', teardown);
    }
    client.on('data', (chunk: Buffer) => {
      parse(chunk);
      if (!upstream.write(chunk)) client.pause();
    });
    upstream.on('drain', () => client.resume());
    upstream.pipe(client);
    client.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A statement's text as one line: whitespace collapsed, at most 200 characters. */
export function statementKey(sql: string): string {
  const line = sql.replace(/\s+/g, ' ').trim();
  return line.length > 200 ? `${line.slice(0, 197)}...` : line;
}

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;

/** What a Postgres counting proxy saw. */
export interface PostgresTally {
  /** statements, by text, the connections' set-up left out */
  statements: Tally;
  /** connections opened */
  connections: number;
  /** the `SET ...` statements a connection sends before its first other one (the pool's set-up of a new connection) */
  setUp: number;
}

/**
 * One connection's frontend messages: counts each simple query and each execute, by its statement's text;
 * the `SET` statements before the first other one as the connection's set-up.
 */
function postgresParser(counts: PostgresTally): (chunk: Buffer) => void {
  counts.connections++;
  const tally = counts.statements;
  let settingUp = true;
  const count = (sql: string) => {
    const key = statementKey(sql);
    settingUp &&= /^SET /i.test(key);
    if (settingUp) counts.setUp++;
    else add(tally, key);
  };
  let buffered: Buffer = Buffer.alloc(0);
  let startup = true;
  const statements = new Map<string, string>(); // prepared statement name ('' unnamed) -> text
  const portals = new Map<string, string>(); // portal name -> text
  const cstring = (body: Buffer, from: number): [string, number] => {
    const end = body.indexOf(0, from);
    return [body.toString('utf8', from, end), end + 1];
  };
  return (chunk) => {
    buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
    for (;;) {
      if (startup) {
        // untyped: Int32 length (itself included), Int32 code; an SSL or GSSAPI request is followed by the real start-up
        if (buffered.length < 8) return;
        const length = buffered.readInt32BE(0);
        if (buffered.length < length) return;
        const code = buffered.readInt32BE(4);
        buffered = buffered.subarray(length);
        if (code !== SSL_REQUEST && code !== GSSENC_REQUEST) startup = false;
        continue;
      }
      if (buffered.length < 5) return;
      const length = buffered.readInt32BE(1);
      if (buffered.length < 1 + length) return;
      const type = String.fromCharCode(buffered[0]);
      const body = buffered.subarray(5, 1 + length);
      buffered = buffered.subarray(1 + length);
      if (type === 'Q') count(cstring(body, 0)[0]);
      else if (type === 'P') {
        const [name, next] = cstring(body, 0);
        statements.set(name, cstring(body, next)[0]);
      } else if (type === 'B') {
        const [portal, next] = cstring(body, 0);
        portals.set(portal, statements.get(cstring(body, next)[0]) ?? '(unknown prepared statement)');
      } else if (type === 'E') count(portals.get(cstring(body, 0)[0]) ?? '(unknown portal)');
    }
  };
}

export interface PostgresCounter {
  /** `databaseUrl` through the proxy */
  url: string;
  snapshot(): PostgresTally;
  stop(): Promise<void>;
}

/** A counting proxy in front of the Postgres of `databaseUrl`. */
export async function startPostgresCounter(databaseUrl: string): Promise<PostgresCounter> {
  const target = new URL(databaseUrl);
  const counts: PostgresTally = { statements: emptyTally(), connections: 0, setUp: 0 };
  const relay = await startCountingRelay({ host: target.hostname, port: Number(target.port || 5432) }, () => postgresParser(counts));
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String(relay.port);
  return { url: url.toString(), snapshot: () => ({ ...counts, statements: copy(counts.statements) }), stop: relay.stop };
}

export function postgresDelta(after: PostgresTally, before: PostgresTally): PostgresTally {
  return { statements: tallyDelta(after.statements, before.statements), connections: after.connections - before.connections, setUp: after.setUp - before.setUp };
}

/** One connection's RESP commands, by name (an inline command by its first word). */
function redisParser(tally: Tally): (chunk: Buffer) => void {
  let buffered: Buffer = Buffer.alloc(0);
  const CRLF = Buffer.from('\r\n');
  /** The command at the start of `buffered` and its length, or undefined while it is incomplete. */
  const next = (): { name: string; length: number } | undefined => {
    const lineEnd = buffered.indexOf(CRLF);
    if (lineEnd < 0) return undefined;
    if (buffered[0] !== 0x2a /* '*' */) return { name: buffered.toString('utf8', 0, lineEnd).trim().split(/\s+/)[0].toUpperCase(), length: lineEnd + 2 };
    const count = Number(buffered.toString('utf8', 1, lineEnd));
    let at = lineEnd + 2;
    let name = '';
    for (let i = 0; i < count; i++) {
      const headerEnd = buffered.indexOf(CRLF, at);
      if (headerEnd < 0) return undefined;
      const size = Number(buffered.toString('utf8', at + 1, headerEnd));
      const end = headerEnd + 2 + size + 2;
      if (buffered.length < end) return undefined;
      if (i === 0) name = buffered.toString('utf8', headerEnd + 2, headerEnd + 2 + size).toUpperCase();
      at = end;
    }
    return { name, length: at };
  };
  return (chunk) => {
    buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
    for (let command = next(); command; command = next()) {
      if (command.name) add(tally, command.name);
      buffered = buffered.subarray(command.length);
    }
  };
}

/** A counting proxy in front of the Redis of `redisUrl`. */
export async function startRedisCounter(redisUrl: string): Promise<RedisCounter> {
  const target = new URL(redisUrl);
  const tally = emptyTally();
  const relay = await startCountingRelay({ host: target.hostname, port: Number(target.port || 6379) }, () => redisParser(tally));
  const url = new URL(redisUrl);
  url.hostname = '127.0.0.1';
  url.port = String(relay.port);
  return { url: url.toString(), snapshot: () => copy(tally), stop: relay.stop };
}

/**
 * The commands a Redis server executed (INFO commandstats: every client's, and the commands its scripts ran),
 * by name; the INFO command that reads them is left out.
 */
export function redisServerCommands(port: number): Tally {
  const out = spawnSync('redis-cli', ['-p', String(port), 'INFO', 'commandstats'], { encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`redis-cli INFO commandstats on port ${port}: ${out.stderr}`);
  const tally = emptyTally();
  for (const match of out.stdout.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    if (match[1] !== 'info') add(tally, match[1].toUpperCase(), Number(match[2]));
  }
  return tally;
}

const BALANCE_OF = '0x70a08231';
const ALLOWANCE = '0xdd62ed3e';

/** `MERCHANT_FUNDS`: the kind of an `eth_call` of the token's `balanceOf(merchant)` or `allowance(merchant, …)`. */
export const MERCHANT_FUNDS = 'eth_call (merchant funds)';

/**
 * JSON-RPC calls by method, from a json-rpc-proxy's requests (a batch's calls one by one); an `eth_call` reading
 * `merchant`'s balance or allowance is counted as MERCHANT_FUNDS.
 */
export function rpcTally(requests: ReadonlyArray<ReadonlyArray<{ method: string; params?: unknown[] }>>, merchant?: string): Tally {
  const owner = merchant?.toLowerCase().replace(/^0x/, '').padStart(64, '0');
  const tally = emptyTally();
  for (const request of requests) {
    for (const call of request) {
      const tx = call.method === 'eth_call' ? (call.params?.[0] as { data?: string; input?: string } | undefined) : undefined;
      const data = (tx?.data ?? tx?.input ?? '').toLowerCase();
      const readsMerchant = owner !== undefined && (data.startsWith(BALANCE_OF) || data.startsWith(ALLOWANCE)) && data.slice(10, 74) === owner;
      add(tally, readsMerchant ? MERCHANT_FUNDS : call.method);
    }
  }
  return tally;
}
