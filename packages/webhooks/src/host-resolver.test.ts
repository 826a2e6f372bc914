import { lookup } from 'node:dns/promises';
import { HostLookupError, HostResolver } from './host-resolver';
import { DnsResponder } from './testing/dns-responder';

async function until(condition: () => boolean): Promise<void> {
  for (const started = Date.now(); !condition(); await new Promise((resolve) => setTimeout(resolve, 5))) {
    if (Date.now() - started > 10_000) throw new Error('the condition did not come true within 10 s');
  }
}

describe('HostResolver (c-ares, against a DNS server on loopback)', () => {
  let dns: DnsResponder;
  beforeAll(async () => {
    dns = await new DnsResponder((name) => {
      if (name.startsWith('slow')) return { a: ['93.184.216.34'], delayMs: Infinity };
      if (name === 'gone.test') return { nxdomain: true };
      if (name === 'inside.test') return { a: ['10.0.0.7'] };
      return { a: ['93.184.216.34', '93.184.216.35'] };
    }).start();
  });
  afterAll(() => dns.stop());

  const resolver = (maxInFlight = 4) => new HostResolver({ servers: [dns.address], timeoutMs: 300, tries: 1, maxInFlight });

  it('answers with every address; IP literals and localhost without a query', async () => {
    const r = resolver();
    const before = dns.queries;
    expect(await r.resolve('shop.test')).toEqual(['93.184.216.34', '93.184.216.35']);
    expect(dns.queries - before).toBe(2); // A and AAAA
    expect(await r.resolve('inside.test')).toEqual(['10.0.0.7']);
    expect(await r.resolve('8.8.8.8')).toEqual(['8.8.8.8']);
    expect(await r.resolve('[::1]')).toEqual(['::1']);
    expect(await r.resolve('localhost')).toEqual(['127.0.0.1', '::1']);
    expect(await r.resolve('api.localhost')).toEqual(['127.0.0.1', '::1']);
    expect(dns.queries - before).toBe(4);
  });

  it('a name that does not exist is "no such host"; one that never answers times out', async () => {
    const r = resolver();
    const gone = await r.resolve('gone.test').catch((e: HostLookupError) => e);
    expect(gone).toBeInstanceOf(HostLookupError);
    expect((gone as HostLookupError).noSuchHost).toBe(true);
    const started = Date.now();
    const slow = await r.resolve('slow1.test').catch((e: HostLookupError) => e);
    expect((slow as HostLookupError).code).toBe('ETIMEOUT');
    expect((slow as HostLookupError).noSuchHost).toBe(false);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('caps the lookups in flight: one more fails at once as busy, and the thread pool stays free', async () => {
    // "at once" is shown by order, not by a wall-clock bound: the answers come while the three hanging lookups
    // are still in flight (their server holds them until released, far within their timeout), and the busy one
    // never reached the DNS server
    dns.release(); // what earlier tests left unanswered
    const r = new HostResolver({ servers: [dns.address], timeoutMs: 60_000, tries: 1, maxInFlight: 3 });
    const hanging = ['slow-a.test', 'slow-b.test', 'slow-c.test'].map((name) => r.resolve(name));
    expect(r.stats.inFlight).toBe(3);
    await expect(r.resolve('slow-d.test')).rejects.toMatchObject({ code: 'ELOOKUPBUSY' });
    expect(r.stats.inFlight).toBe(3);
    // the event loop and libuv's pool are free meanwhile: a system lookup answers before the hanging ones end
    await lookup('localhost');
    expect(r.stats.inFlight).toBe(3);
    expect(dns.queried('slow-d.test')).toBe(false);
    // the three lookups' queries (A and AAAA each) are held at the server; answered, they free their slots
    await until(() => dns.heldQueries === 6);
    dns.release();
    expect(await Promise.all(hanging)).toEqual([['93.184.216.34'], ['93.184.216.34'], ['93.184.216.34']]);
    expect(r.stats).toEqual({ inFlight: 0, peakInFlight: 3 });
    expect(await r.resolve('shop.test')).toHaveLength(2);
  });
});
