import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';

/** What a test DNS server answers for a name: the A records, nothing (no reply at all), or after a delay. */
export interface DnsAnswer {
  /** IPv4 addresses for A queries (AAAA queries get an empty answer) */
  a?: string[];
  /** reply after this long; `Infinity`: not until `release()` (never, if the test does not call it) */
  delayMs?: number;
  /** NXDOMAIN */
  nxdomain?: boolean;
}

/**
 * A tiny DNS server on loopback UDP for tests: answers A/AAAA queries as `answer(name)` says, possibly
 * late or never, and counts the names it is being asked about at once (a name's lookup sends A and AAAA,
 * and retries: one name is one lookup).
 */
export class DnsResponder {
  private socket?: Socket;
  private readonly pending = new Map<string, number>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private heldReplies: Array<() => void> = [];
  private readonly asked = new Set<string>();
  /** queries received in all */
  queries = 0;
  /** the most names awaiting an answer at once */
  peakNamesInFlight = 0;

  constructor(private readonly answer: (name: string) => DnsAnswer) {}

  get address(): string {
    const info = this.socket!.address();
    return `127.0.0.1:${info.port}`;
  }

  /** Whether this name was ever asked about. */
  queried(name: string): boolean {
    return this.asked.has(name.toLowerCase());
  }

  get namesInFlight(): number {
    return this.pending.size;
  }

  async start(): Promise<this> {
    const socket = createSocket('udp4');
    socket.on('message', (message, remote) => this.onQuery(message, remote));
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    this.socket = socket;
    return this;
  }

  /** Queries held, unanswered, until `release()`. */
  get heldQueries(): number {
    return this.heldReplies.length;
  }

  /** Answers every query held so far (those of names answered with `delayMs: Infinity`). */
  release(): void {
    const held = this.heldReplies;
    this.heldReplies = [];
    for (const reply of held) reply();
  }

  async stop(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.heldReplies = [];
    await new Promise<void>((resolve) => (this.socket ? this.socket.close(() => resolve()) : resolve()));
  }

  private onQuery(message: Buffer, remote: RemoteInfo): void {
    this.queries += 1;
    const { name, type, questionEnd } = parseQuestion(message);
    const answer = this.answer(name);
    const key = name.toLowerCase();
    this.asked.add(key);
    this.pending.set(key, (this.pending.get(key) ?? 0) + 1);
    this.peakNamesInFlight = Math.max(this.peakNamesInFlight, this.pending.size);
    const reply = () => {
      const left = (this.pending.get(key) ?? 1) - 1;
      if (left <= 0) this.pending.delete(key);
      else this.pending.set(key, left);
      this.socket?.send(buildReply(message, questionEnd, type, answer), remote.port, remote.address);
    };
    if (answer.delayMs === Infinity) return void this.heldReplies.push(reply);
    if (!answer.delayMs) return reply();
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      reply();
    }, answer.delayMs);
    this.timers.add(timer);
  }
}

function parseQuestion(message: Buffer): { name: string; type: number; questionEnd: number } {
  const labels: string[] = [];
  let offset = 12;
  while (message[offset] !== 0) {
    const length = message[offset];
    labels.push(message.subarray(offset + 1, offset + 1 + length).toString('ascii'));
    offset += length + 1;
  }
  offset += 1;
  const type = message.readUInt16BE(offset);
  return { name: labels.join('.'), type, questionEnd: offset + 4 };
}

function buildReply(query: Buffer, questionEnd: number, type: number, answer: DnsAnswer): Buffer {
  const header = Buffer.alloc(12);
  query.copy(header, 0, 0, 2); // id
  const records = !answer.nxdomain && type === 1 ? (answer.a ?? []) : [];
  header.writeUInt16BE(0x8180 | (answer.nxdomain ? 3 : 0), 2); // response, recursion desired and available, rcode
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(records.length, 6);
  const question = query.subarray(12, questionEnd);
  const answers = records.map((ip) => {
    const rr = Buffer.alloc(16);
    rr.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
    rr.writeUInt16BE(1, 2); // A
    rr.writeUInt16BE(1, 4); // IN
    rr.writeUInt32BE(60, 6); // TTL
    rr.writeUInt16BE(4, 10);
    ip.split('.').forEach((octet, i) => rr.writeUInt8(Number(octet), 12 + i));
    return rr;
  });
  return Buffer.concat([header, question, ...answers]);
}
