// Attacks on the webhook deliveries and the webhook hosts, on the real USDC on anvil:
// (w1) a receiver that accepts connections and never answers, fed with validly signed verifications and
//      with garbage ones, while other merchants' payments settle: their settlement events must not starve;
// (w2) garbage-signature verifies that name a webhook_url: no event, no lookup, no delivery;
// (w3) webhook hosts whose DNS never answers: verify stays fast and lookups in flight stay capped;
// (w4) a receiver that answers 200, but only after 4.5 s: its breaker never opens (every attempt succeeds),
//      and deliveries that find it at its cap must not wait for it in the slots other merchants need.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Wallet } from 'ethers';
import { loadConfig } from '@facilitator/config';
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from '@facilitator/payment-mechanisms';
import { createSilentLogger } from '@facilitator/logging';
import { buildApi, type ApiRuntime } from '../../apps/api/src/build-api';
import { DnsResponder } from '../../packages/webhooks/src/testing/dns-responder';
import { startTestStack, type PaymentBodies, type TestStack } from '../support/test-stack';
import { WebhookReceiver } from '../support/webhook-receiver';
import { abuseReport } from './abuse-report';

const RECEIVER_CAP = 4;
// one wave of the cap's timeouts opens the breaker (the default is 5), so the test sees it open within seconds
const BREAKER_FAILURES = 4;

let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.stop();
});

/** A receiver that accepts every connection and request and never answers; counts what it holds. */
async function neverAnswering() {
  const counts = { requests: 0, open: 0, peakOpen: 0, byPath: new Map<string, number>() };
  const server = http.createServer((req) => {
    counts.requests++;
    counts.byPath.set(req.url ?? '/', (counts.byPath.get(req.url ?? '/') ?? 0) + 1);
    counts.open++;
    counts.peakOpen = Math.max(counts.peakOpen, counts.open);
    req.resume();
    req.socket.once('close', () => counts.open--);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    counts,
    stop: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A Form B verify body whose signature is not the payer's (a stranger signed the payer's authorization). */
async function garbageSigned(p: PaymentBodies, overrides: Record<string, unknown>) {
  const forged = await Wallet.createRandom().signTypedData(stack.devnet.eip712Domain, TRANSFER_WITH_AUTHORIZATION_TYPES, p.authorization);
  const body = p.formB(overrides) as { metadata: { paymentPayload: { payload: { signature: string } } } };
  body.metadata.paymentPayload.payload.signature = forged;
  return body;
}

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))];

/** 60 verifications the attacker signed (its own payments), each a verification.completed to `url`; waits until the receiver holds its cap. */
async function flood(url: string, requests: () => number) {
  const signed = [];
  for (let i = 0; i < 60; i++) signed.push(await stack.payment());
  const answers = await Promise.all(signed.map((p) => stack.http.post('/v1/verify').send(p.formB({ webhook_url: url }))));
  expect(answers.every((a) => a.status === 200)).toBe(true);
  const started = Date.now();
  while (requests() < RECEIVER_CAP && Date.now() - started < 10_000) await new Promise((r) => setTimeout(r, 20));
  return answers.map((a) => a.body.verification_id as string);
}

/** Five of the merchant's honest payments, settled one by one: each settlement.completed's delay after settled_at. */
async function honestSettlementLatencies(honest: WebhookReceiver, prefix: string): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < 5; i++) {
    const url = honest.endpoint(`${prefix}-${i}`);
    const v = await stack.http.post('/v1/verify').send((await stack.payment()).formB({ webhook_url: url }));
    expect(v.status).toBe(200);
    const s = await stack.http.post('/v1/settle').send({ verification_id: v.body.verification_id, destination_address: stack.devnet.accounts.merchant.address });
    expect([200, 202]).toContain(s.status);
    const deliveries = await honest.waitFor(`${prefix}-${i}`, 2, 30_000);
    const settledEvent = deliveries.find((d) => d.body.event_type === 'settlement.completed');
    expect(settledEvent).toBeDefined();
    // from the moment the settlement was settled (its event committed with that state) to the receiver
    const settlement = await stack.db.prisma.settlement.findUniqueOrThrow({ where: { id: String(settledEvent!.body.settlement_id) } });
    latencies.push(Math.max(0, settledEvent!.at - settlement.settledAt!.getTime()));
  }
  return latencies;
}

it('(w1, w2) a never-answering receiver fed signed and garbage verifies: other merchants’ settlement events still arrive at once; the receiver holds at most its cap', async () => {
  const report = abuseReport(
    'w1-never-answering-receiver',
    'A webhook receiver that never answers',
    `60 validly signed verifications and 200 garbage-signature ones name a receiver that accepts connections and never answers (WEBHOOK_CONCURRENCY 20, WEBHOOK_RECEIVER_CONCURRENCY ${RECEIVER_CAP}, breaker after ${BREAKER_FAILURES} failures); meanwhile 5 payments to the merchant settle with its own receiver`,
  );
  const hostile = await neverAnswering();
  const honest = await new WebhookReceiver().start();
  await stack.startWorker({ WEBHOOK_RECEIVER_CONCURRENCY: String(RECEIVER_CAP), WEBHOOK_BREAKER_FAILURES: String(BREAKER_FAILURES) });
  try {
    // garbage first: none of these may make an event, a job or a request
    const garbage = [];
    for (let i = 0; i < 200; i++) garbage.push(await garbageSigned(await stack.payment(), { webhook_url: `${hostile.url}/garbage` }));
    const garbageAnswers = await Promise.all(garbage.map((b) => stack.http.post('/v1/verify').send(b)));
    expect(garbageAnswers.every((a) => a.status === 400 && a.body.error.message === 'invalid signature')).toBe(true);
    const garbageIds = garbageAnswers.map((a) => a.body.error.details.verification_id as string);

    // the flood: validly signed (the attacker signs its own payments), each a verification.completed to the hostile receiver
    const floodIds = await flood(`${hostile.url}/flood`, () => hostile.counts.requests);
    // the merchant's honest payments settle while the hostile deliveries hang
    const latencies = await honestSettlementLatencies(honest, 'settled');
    const maxLatency = Math.max(...latencies);

    // let the hostile deliveries run out their 5 s deadlines: once BREAKER_FAILURES of them failed in a row, the breaker is open
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && (hostile.counts.open > 0 || hostile.counts.requests < BREAKER_FAILURES)) await new Promise((r) => setTimeout(r, 100));
    const requestsWhenOpened = hostile.counts.requests;
    // with the breaker open, the 50-odd events still queued for it send nothing (they are held, not attempted)
    await new Promise((r) => setTimeout(r, 6_000));
    const requestsWhileOpen = hostile.counts.requests - requestsWhenOpened;
    const garbageEvents = await stack.db.prisma.webhookEvent.count({ where: { verificationId: { in: garbageIds } } });
    const floodAttempts = await stack.db.prisma.webhookAttempt.count({ where: { event: { verificationId: { in: floodIds } } } });
    const floodFailed = await stack.db.prisma.webhookEvent.count({ where: { verificationId: { in: floodIds }, status: 'failed' } });

    const rows = [
      report.check('garbage-signature verifications: webhook events stored', 0, garbageEvents),
      report.check('garbage-signature verifications: requests to their webhook_url', 0, hostile.counts.byPath.get('/garbage') ?? 0),
      report.assert('slots held at once by the hostile receiver (its requests open at once)', `at most ${RECEIVER_CAP} (of 20)`, hostile.counts.peakOpen, hostile.counts.peakOpen <= RECEIVER_CAP && hostile.counts.peakOpen > 0),
      report.assert(
        'requests the hostile receiver got before its breaker opened (60 events queued for it)',
        `at most ${BREAKER_FAILURES + RECEIVER_CAP - 1}`,
        hostile.counts.requests,
        hostile.counts.requests <= BREAKER_FAILURES + RECEIVER_CAP - 1,
      ),
      report.check('requests to the hostile receiver in the 6 s after its breaker opened', 0, requestsWhileOpen),
      report.check('hostile deliveries recorded as attempts (held ones count none)', hostile.counts.requests, floodAttempts),
      report.check('hostile events failed for good meanwhile (their 6 attempts are kept for real failures)', 0, floodFailed),
      report.assert('other merchant: settlement.completed delivered after the settlement was settled (max of 5)', 'under 2 s', `${maxLatency} ms`, maxLatency < 2_000),
    ];
    report.note(`settlement.completed latencies after settled_at: ${latencies.join(', ')} ms`);
    report.note(`without the cap, 60 hanging deliveries × 5 s over 20 slots hold every slot for 15 s, and settlement events wait behind them`);
    report.save();
    expect(garbageEvents).toBe(0);
    expect(hostile.counts.byPath.get('/garbage') ?? 0).toBe(0);
    expect(hostile.counts.peakOpen).toBeGreaterThan(0);
    expect(hostile.counts.peakOpen).toBeLessThanOrEqual(RECEIVER_CAP);
    expect(hostile.counts.requests).toBeLessThanOrEqual(BREAKER_FAILURES + RECEIVER_CAP - 1);
    expect(requestsWhileOpen).toBe(0);
    expect(floodAttempts).toBe(hostile.counts.requests);
    expect(floodFailed).toBe(0);
    expect(maxLatency).toBeLessThan(2_000);
    expect(rows.every(Boolean)).toBe(true);
  } finally {
    await stack.killWorkers();
    await Promise.all([hostile.stop(), honest.stop()]);
  }
}, 180_000);

/** A receiver that answers every request 200, after `delayMs`; counts what it holds. */
async function slowAnswering(delayMs: number) {
  const counts = { requests: 0, open: 0, peakOpen: 0 };
  const server = http.createServer((req, res) => {
    counts.requests++;
    counts.open++;
    counts.peakOpen = Math.max(counts.peakOpen, counts.open);
    req.resume();
    const timer = setTimeout(() => res.writeHead(200).end(), delayMs);
    req.socket.once('close', () => {
      clearTimeout(timer);
      counts.open--;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    counts,
    stop: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

it('(w4) a receiver answering after 4.5 s, its breaker never open: it holds at most its cap, other merchants’ settlement events still arrive at once', async () => {
  const report = abuseReport(
    'w4-slow-answering-receiver',
    'A webhook receiver that answers, slowly',
    `60 validly signed verifications name a receiver that answers 200 after 4.5 s (within the 5 s deadline: every attempt succeeds, so its breaker never opens; WEBHOOK_CONCURRENCY 20, WEBHOOK_RECEIVER_CONCURRENCY ${RECEIVER_CAP}); meanwhile 5 payments to the merchant settle with its own receiver`,
  );
  const slow = await slowAnswering(4_500);
  const honest = await new WebhookReceiver().start();
  await stack.startWorker({ WEBHOOK_RECEIVER_CONCURRENCY: String(RECEIVER_CAP) });
  try {
    const floodIds = await flood(`${slow.url}/slow`, () => slow.counts.requests);
    const latencies = await honestSettlementLatencies(honest, 'slow-settled');
    const maxLatency = Math.max(...latencies);
    const floodFailed = await stack.db.prisma.webhookEvent.count({ where: { verificationId: { in: floodIds }, status: 'failed' } });

    const rows = [
      report.assert('slots held at once by the slow receiver (its requests open at once)', `at most ${RECEIVER_CAP} (of 20)`, slow.counts.peakOpen, slow.counts.peakOpen <= RECEIVER_CAP && slow.counts.peakOpen > 0),
      report.check('slow receiver’s events failed for good (it answers; they are only late)', 0, floodFailed),
      report.assert('other merchant: settlement.completed delivered after the settlement was settled (max of 5)', 'under 2 s', `${maxLatency} ms`, maxLatency < 2_000),
    ];
    report.note(`settlement.completed latencies after settled_at: ${latencies.join(', ')} ms; the slow receiver got ${slow.counts.requests} requests meanwhile`);
    report.note('a delivery waits in line for a busy receiver only when it can expect a place within 100 ms at the pace the receiver answers: for this one, never');
    report.save();
    expect(slow.counts.peakOpen).toBeGreaterThan(0);
    expect(slow.counts.peakOpen).toBeLessThanOrEqual(RECEIVER_CAP);
    expect(floodFailed).toBe(0);
    expect(maxLatency).toBeLessThan(2_000);
    expect(rows.every(Boolean)).toBe(true);
  } finally {
    await stack.killWorkers();
    await Promise.all([slow.stop(), honest.stop()]);
  }
}, 180_000);

it('(w3) 100 webhook hosts whose DNS never answers: verify stays fast, lookups in flight stay capped, garbage makes none', async () => {
  const report = abuseReport(
    'w3-slow-webhook-dns',
    'Webhook hosts whose DNS never answers',
    '100 validly signed verifies name hosts whose DNS server never answers, 100 garbage-signature ones name more such hosts; once they are taken in, plain verifies and verifies naming another host (WEBHOOK_DNS_MAX_IN_FLIGHT 16, timeout 2 s, 1 try)',
  );
  const dns = await new DnsResponder((name) => (name.endsWith('.hang.test') ? { a: ['93.184.216.34'], delayMs: Infinity } : { a: ['93.184.216.34'] })).start();
  let api: ApiRuntime | undefined;
  let server: http.Server | undefined;
  try {
    api = buildApi(
      loadConfig({
        ...stack.env,
        WEBHOOK_ALLOW_PRIVATE: 'false',
        WEBHOOK_DNS_SERVERS: dns.address,
        WEBHOOK_DNS_TIMEOUT_MS: '2000',
        WEBHOOK_DNS_TRIES: '1',
        WEBHOOK_DNS_MAX_IN_FLIGHT: '16',
      }),
      createSilentLogger(),
    );
    server = api.app.listen(0, '127.0.0.1');
    await new Promise((r) => server!.once('listening', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 512 });
    const post = (body: unknown) =>
      new Promise<{ status: number; ms: number }>((resolve, reject) => {
        const started = Date.now();
        const req = http.request(`${base}/v1/verify`, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: Date.now() - started }));
        });
        req.on('error', reject);
        req.end(JSON.stringify(body));
      });

    const hanging = [];
    for (let i = 0; i < 100; i++) hanging.push((await stack.payment()).formB({ webhook_url: `http://shop-${i}.hang.test/hook` }));
    const garbage = [];
    for (let i = 0; i < 100; i++) garbage.push(await garbageSigned(await stack.payment(), { webhook_url: `http://garbage-${i}.hang.test/hook` }));
    const plain = [];
    for (let i = 0; i < 20; i++) plain.push((await stack.payment()).formB());
    const resolving = [];
    for (let i = 0; i < 20; i++) resolving.push((await stack.payment()).formB({ webhook_url: `http://shop-${i}.good.test/hook` }));

    let hangingAnswered = 0;
    const hangingAnswers = Promise.all(hanging.map((b) => post(b).finally(() => hangingAnswered++)));
    const garbageAnswers = Promise.all(garbage.map(post));
    // measured once the flood has been taken in: its lookups fill the resolver (16 hang), the rest were
    // answered at once (the resolver busy), the garbage refused without a lookup
    await garbageAnswers;
    const filling = Date.now() + 20_000;
    while ((dns.namesInFlight < 16 || hangingAnswered < 84) && Date.now() < filling) await new Promise((r) => setTimeout(r, 10));
    const namesHangingMeanwhile = dns.namesInFlight;
    const plainAnswers = await Promise.all(plain.map(post));
    const resolvingAnswers = await Promise.all(resolving.map(post));
    const [h, g] = await Promise.all([hangingAnswers, garbageAnswers]);
    agent.destroy();

    const plainMs = plainAnswers.map((a) => a.ms);
    const resolvingMs = resolvingAnswers.map((a) => a.ms);
    const hangingMax = Math.max(...h.map((a) => a.ms));
    const garbageQueries = [...Array(100).keys()].filter((i) => dns.queried(`garbage-${i}.hang.test`)).length;
    const rows = [
      report.check('validly signed verifies naming a hanging host: answered 200', 100, h.filter((a) => a.status === 200).length),
      report.check('garbage-signature verifies: answered 400', 100, g.filter((a) => a.status === 400).length),
      report.check('garbage-signature verifies: their hosts looked up', 0, garbageQueries),
      report.assert('host names awaiting the DNS server at once (lookups in flight)', 'at most 16', dns.peakNamesInFlight, dns.peakNamesInFlight <= 16 && dns.peakNamesInFlight > 0),
      report.check('lookups hanging (the resolver full) while the other verifies ran', 16, namesHangingMeanwhile),
      report.assert('plain verifies meanwhile: p50 / max', 'max under 1 s', `${percentile(plainMs, 50)} / ${Math.max(...plainMs)} ms`, Math.max(...plainMs) < 1_000),
      report.assert('verifies naming another host meanwhile (no lookup slot free: accepted, checked again when delivery connects): p50 / max', 'max under 1 s', `${percentile(resolvingMs, 50)} / ${Math.max(...resolvingMs)} ms`, Math.max(...resolvingMs) < 1_000),
      report.assert('a verify naming a hanging host waits at most its own lookup', 'under 5 s (2 s timeout, 1 try)', `${hangingMax} ms`, hangingMax < 5_000),
    ];
    report.note('lookups go through c-ares (node:dns Resolver), never getaddrinfo on libuv\'s 4 threads; a lookup beyond the cap fails at once as busy and the URL is checked again when delivery connects');
    report.save();
    expect(h.filter((a) => a.status === 200)).toHaveLength(100);
    expect(g.filter((a) => a.status === 400)).toHaveLength(100);
    expect(garbageQueries).toBe(0);
    expect(dns.peakNamesInFlight).toBeGreaterThan(0);
    expect(dns.peakNamesInFlight).toBeLessThanOrEqual(16);
    expect(namesHangingMeanwhile).toBe(16);
    expect(Math.max(...plainMs)).toBeLessThan(1_000);
    expect(Math.max(...resolvingMs)).toBeLessThan(1_000);
    expect(hangingMax).toBeLessThan(5_000);
    expect(rows.every(Boolean)).toBe(true);
  } finally {
    if (server) await new Promise((r) => server!.close(r));
    await api?.close();
    await dns.stop();
  }
}, 180_000);
