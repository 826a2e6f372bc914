import { assertAcceptableWebhookUrl, assertPublicHost, isAllowedPort, isPublicAddress, parseWebhookUrl } from './address-policy';
import { HostResolver } from './host-resolver';
import { DnsResponder } from './testing/dns-responder';

describe('isPublicAddress', () => {
  it.each(['8.8.8.8', '2001:4860:4860::8888'])('%s is public', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });

  it.each(['127.0.0.1', '::1', '::ffff:127.0.0.1', '::7f00:1', '::a00:1', '::808:808', '::', '10.0.0.1', '169.254.169.254', 'fd00::1', '64:ff9b::7f00:1'])(
    '%s is not (IPv4-compatible IPv6 ::/96 included)',
    (address) => {
      expect(isPublicAddress(address)).toBe(false);
    },
  );
});

describe('webhook ports', () => {
  const policy = { requireHttps: false, allowPrivate: false };

  it('443 and 80 by default (explicit or implied by the scheme), others only when configured', async () => {
    expect(isAllowedPort(new URL('https://example.com/hook'), policy)).toBe(true);
    expect(isAllowedPort(new URL('http://example.com:80/hook'), policy)).toBe(true);
    expect(isAllowedPort(new URL('https://example.com:8443/hook'), policy)).toBe(false);
    expect(isAllowedPort(new URL('https://example.com:8443/hook'), { ...policy, allowedPorts: [8443] })).toBe(true);
    expect(isAllowedPort(new URL('https://example.com/hook'), { ...policy, allowedPorts: [8443] })).toBe(false);
    await expect(assertAcceptableWebhookUrl('https://8.8.8.8:22/hook', policy)).rejects.toThrow('webhook_url port 22 is not allowed (allowed: 443, 80)');
    await expect(assertAcceptableWebhookUrl('https://8.8.8.8:8443/hook', { ...policy, allowedPorts: [8443] })).resolves.toBeInstanceOf(URL);
  });
});

describe('webhook URL checks: none before the signature needs a lookup', () => {
  const strict = { requireHttps: false, allowPrivate: false };
  let dns: DnsResponder;
  beforeAll(async () => {
    dns = await new DnsResponder((name) => {
      if (name === 'inside.test') return { a: ['10.1.2.3'] };
      if (name === 'gone.test') return { nxdomain: true };
      if (name === 'slow.test') return { a: ['93.184.216.34'], delayMs: Infinity };
      return { a: ['93.184.216.34'] };
    }).start();
  });
  afterAll(() => dns.stop());

  it('parseWebhookUrl refuses IP literals and localhost names that are not public, without any query', () => {
    const before = dns.queries;
    expect(() => parseWebhookUrl('http://127.0.0.1/hook', strict)).toThrow('non-public address (127.0.0.1)');
    expect(() => parseWebhookUrl('http://LOCALHOST./hook', strict)).toThrow('non-public address (localhost is loopback)');
    expect(() => parseWebhookUrl('http://api.localhost/hook', strict)).toThrow('non-public address');
    expect(parseWebhookUrl('http://inside.test/hook', strict)).toBeInstanceOf(URL);
    // development and tests: loopback is allowed
    expect(parseWebhookUrl('http://localhost:8080/hook', { requireHttps: false, allowPrivate: true })).toBeInstanceOf(URL);
    expect(dns.queries).toBe(before);
  });

  it('assertPublicHost: refuses a private answer and a missing host, lets a lookup that could not finish pass', async () => {
    const resolver = new HostResolver({ servers: [dns.address], timeoutMs: 200, tries: 1, maxInFlight: 8 });
    await expect(assertPublicHost(new URL('http://inside.test/'), strict, resolver)).rejects.toThrow('non-public address (10.1.2.3)');
    await expect(assertPublicHost(new URL('http://gone.test/'), strict, resolver)).rejects.toThrow('does not resolve');
    await expect(assertPublicHost(new URL('http://shop.test/'), strict, resolver)).resolves.toBeUndefined();
    // the connect-time check still guards a host whose lookup timed out here
    await expect(assertPublicHost(new URL('http://slow.test/'), strict, resolver)).resolves.toBeUndefined();
    await expect(assertPublicHost(new URL('http://inside.test/'), { allowPrivate: true }, resolver)).resolves.toBeUndefined();
  });
});
