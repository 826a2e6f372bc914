import type { PrismaClient } from '@facilitator/db';
import { safeHttpPost } from './safe-http-post';
import { signWebhookPayload } from './signature';

/** The spec: receivers must answer within 5 seconds. */
export const WEBHOOK_TIMEOUT_MS = 5_000;

export interface WebhookDeliveryOptions {
  prisma: PrismaClient;
  secret: string;
  allowPrivate: boolean;
  timeoutMs?: number;
}

export type AttemptResult = { outcome: 'delivered' } | { outcome: 'retry'; error: string } | { outcome: 'failed'; error: string };

/**
 * One delivery attempt of one event: POST the signed payload, record the attempt, and say whether to
 * try again. An event already delivered is not sent again (a job may run twice after a crash).
 * `lastAttempt`: this is the last attempt of the current round (the 6th, or the 6th after a redelivery).
 */
export class WebhookDelivery {
  constructor(private readonly options: WebhookDeliveryOptions) {}

  async attempt(eventId: string, lastAttempt: boolean): Promise<AttemptResult> {
    const { prisma } = this.options;
    const event = await prisma.webhookEvent.findUnique({ where: { id: eventId } });
    if (!event || event.status === 'delivered') return { outcome: 'delivered' };
    // numbered across redeliveries, so the history reads in order
    const attemptNumber = event.attemptCount + 1;
    const payload = event.payload as Record<string, unknown>;
    const signature = signWebhookPayload(payload, this.options.secret);
    const body = JSON.stringify({ ...payload, signature });
    const result = await safeHttpPost(new URL(event.url), body, { 'x-webhook-signature': signature, 'user-agent': 'x402-facilitator-webhooks/1' }, {
      timeoutMs: this.options.timeoutMs ?? WEBHOOK_TIMEOUT_MS,
      allowPrivate: this.options.allowPrivate,
    });
    const delivered = result.statusCode !== undefined && result.statusCode >= 200 && result.statusCode < 300;
    const error = delivered ? undefined : (result.error ?? `receiver answered HTTP ${result.statusCode}`);
    const final = delivered || lastAttempt;
    await prisma.$transaction([
      prisma.webhookAttempt.create({
        data: { eventId, number: attemptNumber, statusCode: result.statusCode, error, durationMs: result.durationMs },
      }),
      prisma.webhookEvent.update({
        where: { id: eventId },
        data: {
          attemptCount: { increment: 1 },
          ...(delivered ? { status: 'delivered', deliveredAt: new Date() } : final ? { status: 'failed' } : {}),
        },
      }),
    ]);
    if (delivered) return { outcome: 'delivered' };
    return final ? { outcome: 'failed', error: error! } : { outcome: 'retry', error: error! };
  }
}
