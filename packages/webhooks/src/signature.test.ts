import { Webhook } from 'standardwebhooks';
import { signWebhookPayload, standardWebhookSignature, verifyWebhookDelivery, verifyWebhookHeaders, webhookSecretKey } from './signature';

// The worked example of docs/decisions.md (also computed with Python's hmac): if this changes, the
// document (and every receiver) is wrong. The secret's HMAC key is its base64-decoded bytes 0x00..0x1f.
const SECRET = 'whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=';
const PAYLOAD = {
  event_type: 'settlement.completed',
  event_id: 'evt_0123456789abcdef0123456789abcdef',
  timestamp: '2026-11-22T12:00:00.000Z',
  verification_id: 'ver_00112233445566778899aabbccddeeff',
  settlement_id: 'stl_ffeeddccbbaa99887766554433221100',
  merchant_address: '0x209693bc6afc0c5328ba36faf03c514ef312287c',
  status: 'settled',
  data: { settlement_tx_hash: '0x' + 'ab'.repeat(32), settled_amount: '10000', fee: '10000', fee_tx_hash: '0x' + 'cd'.repeat(32) },
};
const DIGEST = '54d39b4e0deb54ef3df1af2f55b4f0d4e4bd93bd03be148ae71f9811d1cdd810';
const BODY = JSON.stringify({ ...PAYLOAD, signature: DIGEST });
const STANDARD = 'v1,x5q5GgluPiCJ+pk38Ta2+cuheUw+DbXQmYx7L0N2pN8=';

describe('webhook signature', () => {
  it('keys the HMAC with the decoded bytes of a whsec_ secret', () => {
    expect(webhookSecretKey(SECRET)).toEqual(Buffer.from([...Array(32).keys()]));
    expect(webhookSecretKey('plain text')).toEqual(Buffer.from('plain text'));
  });

  it('matches the documented worked example', () => {
    expect(signWebhookPayload(PAYLOAD, SECRET)).toBe(DIGEST);
    expect(standardWebhookSignature(PAYLOAD.event_id, 1795348800, BODY, SECRET)).toBe(STANDARD);
  });

  it('the official Standard Webhooks library verifies our signature', () => {
    const now = Math.floor(Date.now() / 1000);
    const headers = { 'webhook-id': PAYLOAD.event_id, 'webhook-timestamp': String(now), 'webhook-signature': standardWebhookSignature(PAYLOAD.event_id, now, BODY, SECRET) };
    expect(new Webhook(SECRET).verify(BODY, headers)).toMatchObject({ event_id: PAYLOAD.event_id });
    expect(() => new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(BODY, headers)).toThrow();
  });

  it('ignores the payload own signature field and key order', () => {
    const reordered = Object.fromEntries(Object.entries({ ...PAYLOAD, signature: DIGEST }).reverse());
    expect(signWebhookPayload(reordered, SECRET)).toBe(DIGEST);
  });

  it('verifies a delivery and refuses tampering, a wrong secret and a body/header mismatch', () => {
    expect(verifyWebhookDelivery(BODY, DIGEST, SECRET)).toEqual({ valid: true, payload: { ...PAYLOAD, signature: DIGEST } });
    expect(verifyWebhookDelivery(BODY.replace('10000', '10001'), DIGEST, SECRET)).toEqual({ valid: false, reason: 'signature does not match' });
    expect(verifyWebhookDelivery(BODY, DIGEST, 'other')).toEqual({ valid: false, reason: 'signature does not match' });
    expect(verifyWebhookDelivery(JSON.stringify({ ...PAYLOAD, signature: '00'.repeat(32) }), DIGEST, SECRET)).toEqual({
      valid: false,
      reason: 'body signature differs from the header',
    });
    expect(verifyWebhookDelivery(BODY, undefined, SECRET)).toEqual({ valid: false, reason: 'missing x-webhook-signature header' });
    expect(verifyWebhookDelivery('not json', DIGEST, SECRET)).toEqual({ valid: false, reason: 'body is not JSON' });
  });

  it('during a rotation, the previous secret verifies against x-webhook-signature-previous', () => {
    const previous = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
    const headers = { 'x-webhook-signature': DIGEST, 'x-webhook-signature-previous': signWebhookPayload(PAYLOAD, previous) };
    expect(verifyWebhookHeaders(BODY, headers, SECRET)).toMatchObject({ valid: true });
    expect(verifyWebhookHeaders(BODY, headers, previous)).toMatchObject({ valid: true });
    expect(verifyWebhookHeaders(BODY, headers, `whsec_${Buffer.alloc(32, 8).toString('base64')}`)).toMatchObject({ valid: false });
    expect(verifyWebhookHeaders(BODY, { 'x-webhook-signature': DIGEST }, previous)).toMatchObject({ valid: false });
  });
});
