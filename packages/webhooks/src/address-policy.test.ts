import { assertAcceptableWebhookUrl, isAllowedPort, isPublicAddress } from './address-policy';

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
