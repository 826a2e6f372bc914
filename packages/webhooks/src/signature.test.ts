import { signWebhookPayload, verifyWebhookDelivery } from './signature';

// The worked example of docs/decisions.md: if this changes, the document (and every receiver) is wrong.
const SECRET = 'whsec_example_secret';
const PAYLOAD = {
  event_type: 'settlement.completed',
  event_id: 'evt_0123456789abcdef0123456789abcdef',
  timestamp: '2026-11-22T12:00:00.000Z',
  verification_id: 'ver_00112233445566778899aabbccddeeff',
  settlement_id: 'stl_ffeeddccbbaa99887766554433221100',
  status: 'settled',
  data: { settlement_tx_hash: '0x' + 'ab'.repeat(32), settled_amount: '10000', fee: '10000', fee_tx_hash: '0x' + 'cd'.repeat(32) },
};
const DIGEST = 'f4fa7e68c7df63561ad92926339000c072e6c4acda4f02a4864290a5431dd29e';

describe('webhook signature', () => {
  it('matches the documented worked example', () => {
    expect(signWebhookPayload(PAYLOAD, SECRET)).toBe(DIGEST);
  });

  it('ignores the payload own signature field and key order', () => {
    const reordered = Object.fromEntries(Object.entries({ ...PAYLOAD, signature: DIGEST }).reverse());
    expect(signWebhookPayload(reordered, SECRET)).toBe(DIGEST);
  });

  it('verifies a delivery and refuses tampering, a wrong secret and a body/header mismatch', () => {
    const body = JSON.stringify({ ...PAYLOAD, signature: DIGEST });
    expect(verifyWebhookDelivery(body, DIGEST, SECRET)).toEqual({ valid: true, payload: { ...PAYLOAD, signature: DIGEST } });
    expect(verifyWebhookDelivery(body.replace('10000', '10001'), DIGEST, SECRET)).toEqual({ valid: false, reason: 'signature does not match' });
    expect(verifyWebhookDelivery(body, DIGEST, 'other')).toEqual({ valid: false, reason: 'signature does not match' });
    expect(verifyWebhookDelivery(JSON.stringify({ ...PAYLOAD, signature: '00'.repeat(32) }), DIGEST, SECRET)).toEqual({
      valid: false,
      reason: 'body signature differs from the header',
    });
    expect(verifyWebhookDelivery(body, undefined, SECRET)).toEqual({ valid: false, reason: 'missing x-webhook-signature header' });
    expect(verifyWebhookDelivery('not json', DIGEST, SECRET)).toEqual({ valid: false, reason: 'body is not JSON' });
  });
});
