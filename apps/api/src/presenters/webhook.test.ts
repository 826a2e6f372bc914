import type { WebhookAttempt, WebhookEvent } from '@facilitator/db';
import { webhookDeliveryRecord } from './webhook';

const CREATED = new Date('2024-05-01T10:00:00.000Z');

function eventRow(fields: Partial<WebhookEvent> = {}, attempts: WebhookAttempt[] = []): WebhookEvent & { attempts: WebhookAttempt[] } {
  return {
    id: 'evt_01',
    eventType: 'settlement.completed',
    verificationId: 'ver_01',
    settlementId: 'stl_01',
    merchant: '0x' + 'aa'.repeat(20),
    url: 'https://merchant.example/hooks',
    payload: { event_type: 'settlement.completed', settlement_id: 'stl_01' },
    status: 'pending',
    attemptCount: attempts.length,
    deliveredAt: null,
    mac: null,
    createdAt: CREATED,
    updatedAt: CREATED,
    ...fields,
    attempts,
  };
}

function attemptRow(number: number, fields: Partial<WebhookAttempt> = {}): WebhookAttempt {
  return {
    id: BigInt(number),
    eventId: 'evt_01',
    number,
    at: new Date(CREATED.getTime() + number * 60_000),
    statusCode: null,
    error: null,
    durationMs: 12,
    ...fields,
  };
}

describe('webhookDeliveryRecord', () => {
  it('a delivery not attempted yet: no attempts, not delivered', () => {
    expect(webhookDeliveryRecord(eventRow())).toStrictEqual({
      id: 'evt_01',
      event_id: 'evt_01',
      event_type: 'settlement.completed',
      url: 'https://merchant.example/hooks',
      status: 'pending',
      verification_id: 'ver_01',
      settlement_id: 'stl_01',
      attempt_count: 0,
      delivered_at: null,
      created_at: '2024-05-01T10:00:00.000Z',
      attempts: [],
      payload: { event_type: 'settlement.completed', settlement_id: 'stl_01' },
    });
  });

  it('a delivery after retries: each attempt with its status code or error category, in order', () => {
    const record = webhookDeliveryRecord(
      eventRow({ status: 'delivered', deliveredAt: new Date('2024-05-01T10:02:00.300Z'), settlementId: null, eventType: 'verification.completed' }, [
        attemptRow(1, { error: 'timeout', durationMs: 5000 }),
        attemptRow(2, { statusCode: 503, error: 'http_503' }),
        attemptRow(3, { statusCode: 204 }),
      ]),
    );
    expect(record).toMatchObject({
      status: 'delivered',
      event_type: 'verification.completed',
      settlement_id: null,
      attempt_count: 3,
      delivered_at: '2024-05-01T10:02:00.300Z',
    });
    expect(record.attempts).toStrictEqual([
      { number: 1, at: '2024-05-01T10:01:00.000Z', status_code: null, error: 'timeout', duration_ms: 5000 },
      { number: 2, at: '2024-05-01T10:02:00.000Z', status_code: 503, error: 'http_503', duration_ms: 12 },
      { number: 3, at: '2024-05-01T10:03:00.000Z', status_code: 204, error: null, duration_ms: 12 },
    ]);
  });

  it('never shows a raw socket error stored by older versions, only its category', () => {
    const record = webhookDeliveryRecord(eventRow({ status: 'failed' }, [attemptRow(1, { error: 'connect ECONNREFUSED 10.0.0.7:5432' }), attemptRow(2, { error: 'socket hang up' })]));
    expect(record.attempts.map((a) => a.error)).toEqual(['refused', 'network']);
  });
});
