import type { VerificationRow } from '@facilitator/db';
import { createSilentLogger } from '@facilitator/logging';
import { FailureReason, type VerificationOutcome } from '@facilitator/verification';
import { WebhookUrlRejected, type NewWebhookEvent, type WebhookOutbox } from '@facilitator/webhooks';
import { hasValidSignature, verificationEvents } from './verification-events';

const record = (fields: Partial<VerificationRow> = {}) =>
  ({
    id: 'ver_1',
    status: 'verified',
    merchant: '0x' + 'aa'.repeat(20),
    payer: '0x' + 'bb'.repeat(20),
    amount: '10000',
    tokenAddress: '0x' + 'cc'.repeat(20),
    network: 'eip155:84532',
    nonce: '0x' + '11'.repeat(32),
    webhookUrl: 'https://hooks.example.com/x',
    ...fields,
  }) as VerificationRow;

function setup(hostCheck: (url: URL) => Promise<void> = async () => undefined) {
  const published: NewWebhookEvent[] = [];
  const hostsChecked: string[] = [];
  const publish = verificationEvents({
    outbox: { publish: async (event: NewWebhookEvent) => void published.push(event) } as unknown as WebhookOutbox,
    logger: createSilentLogger(),
    checkWebhookHost: async (url) => {
      hostsChecked.push(url.hostname);
      await hostCheck(url);
    },
  });
  return { publish, published, hostsChecked };
}

const failure = (reason: FailureReason, message: string) => ({ reason, message, details: {} });

describe('verification events', () => {
  it('a payment without a valid signature makes no event and no host lookup', async () => {
    const { publish, published, hostsChecked } = setup();
    await publish({ record: record({ status: 'rejected' }), failure: failure(FailureReason.InvalidSignature, 'invalid signature') });
    expect(published).toEqual([]);
    expect(hostsChecked).toEqual([]);
  });

  it('a validly signed payment that fails a later check gets verification.failed, after its host is checked', async () => {
    const { publish, published, hostsChecked } = setup();
    await publish({ record: record({ status: 'rejected' }), failure: failure(FailureReason.AmountMismatch, 'amount mismatch') });
    expect(hostsChecked).toEqual(['hooks.example.com']);
    expect(published.map((e) => e.type)).toEqual(['verification.failed']);
  });

  it('a refused host is an error for the route (400) and no event', async () => {
    const { publish, published } = setup(async () => {
      throw new WebhookUrlRejected('webhook_url resolves to a non-public address (10.0.0.1)');
    });
    await expect(publish({ record: record() })).rejects.toThrow('non-public address');
    expect(published).toEqual([]);
  });

  it('which outcomes count as signed', () => {
    const signed = (reason?: FailureReason): Pick<VerificationOutcome, 'failure'> => ({ failure: reason ? failure(reason, '') : undefined });
    expect(hasValidSignature(signed())).toBe(true);
    expect(hasValidSignature(signed(FailureReason.InvalidSignature))).toBe(false);
    for (const reason of Object.values(FailureReason).filter((r) => r !== FailureReason.InvalidSignature)) expect(hasValidSignature(signed(reason))).toBe(true);
  });
});
