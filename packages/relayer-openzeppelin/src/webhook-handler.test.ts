import { StatusWakeups } from './status-wakeups';
import { RelayerWebhookHandler } from './webhook-handler';
import { signRelayerWebhook, verifyRelayerWebhook } from './webhook-signature';

const KEY = 'test_secret';

describe('the relayer webhook signature', () => {
  it("is base64 HMAC-SHA256 of the exact body with the signing key (openssl's answer for the same input)", () => {
    // printf '%s' '{"id":"n1","event":"transaction_update"}' | openssl dgst -sha256 -hmac 'test_secret' -binary | base64
    expect(signRelayerWebhook('{"id":"n1","event":"transaction_update"}', KEY)).toBe('H0h+T0Oz6a8TPP3vWVhOu4pW/E7HJP2Xk1ggZ2QFH7s=');
  });

  it('verifies only the same body with the same key', () => {
    const body = '{"id":"n1","event":"transaction_update"}';
    const signature = signRelayerWebhook(body, KEY);
    expect(verifyRelayerWebhook(body, signature, KEY)).toBe(true);
    expect(verifyRelayerWebhook(Buffer.from(body), ` ${signature} `, KEY)).toBe(true);
    expect(verifyRelayerWebhook(body.replace('n1', 'n2'), signature, KEY)).toBe(false);
    expect(verifyRelayerWebhook(body, signature, 'another key')).toBe(false);
    expect(verifyRelayerWebhook(body, undefined, KEY)).toBe(false);
    expect(verifyRelayerWebhook(body, 'not base64 at all', KEY)).toBe(false);
    expect(verifyRelayerWebhook(body, signature.slice(0, 20), KEY)).toBe(false);
  });
});

describe('RelayerWebhookHandler', () => {
  const notification = (id: unknown, event = 'transaction_update') =>
    JSON.stringify({ id: 'n1', event, payload: { payload_type: 'transaction', id, status: 'sent' }, timestamp: '2026-11-25T09:00:00.123456789+00:00' });

  it('wakes the waiters of the transaction a verified notification names, and only them', async () => {
    const wakeups = new StatusWakeups();
    const handler = new RelayerWebhookHandler(KEY, wakeups);
    const waiting = wakeups.wait('tx-1', 60_000);
    const other = wakeups.wait('tx-2', 50);
    const body = notification('tx-1');

    expect(handler.handle(body, { 'X-Signature': signRelayerWebhook(body, KEY) })).toEqual({ status: 200, woke: true });
    expect(await waiting).toBe(true);
    expect(await other).toBe(false);
    expect(wakeups.size).toBe(0);
  });

  it('answers 401 to a bad or missing signature and wakes nobody', async () => {
    const wakeups = new StatusWakeups();
    const handler = new RelayerWebhookHandler(KEY, wakeups);
    const waiting = wakeups.wait('tx-1', 50);
    const body = notification('tx-1');
    expect(handler.handle(body, { 'x-signature': signRelayerWebhook(body, 'wrong') })).toMatchObject({ status: 401, woke: false });
    expect(handler.handle(body, {})).toMatchObject({ status: 401, woke: false });
    expect(await waiting).toBe(false);
  });

  it('takes (200) but ignores what is not a transaction update, and refuses a body that is not JSON (400)', () => {
    const handler = new RelayerWebhookHandler(KEY, new StatusWakeups());
    const relayerUpdate = notification('tx-1', 'relayer_state_update');
    expect(handler.handle(relayerUpdate, { 'x-signature': signRelayerWebhook(relayerUpdate, KEY) })).toEqual({ status: 200, woke: false });
    expect(handler.handle('{oops', { 'x-signature': signRelayerWebhook('{oops', KEY) })).toMatchObject({ status: 400, woke: false });
    const noId = notification(42);
    expect(handler.handle(noId, { 'x-signature': [signRelayerWebhook(noId, KEY)] })).toEqual({ status: 200, woke: false });
    expect(() => new RelayerWebhookHandler('', new StatusWakeups())).toThrow(/must not be empty/);
  });
});
