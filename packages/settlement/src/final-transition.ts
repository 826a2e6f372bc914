import type { Settlement, SettlementStore, TransitionRequest } from '@facilitator/db';
import type { WebhookOutbox } from '@facilitator/webhooks';
import { finalSettlementEvent } from './settlement-events';
import { isFinal } from './states';

/**
 * Persists a transition. One into a final state, for a payment with a webhook URL, stores the merchant's
 * event in the same database transaction and enqueues it after the commit (a failure to enqueue leaves a
 * pending event row that the webhook sweeper enqueues). Null when the settlement was not in `from` any more.
 */
export async function transitionWithFinalEvent(
  settlements: Pick<SettlementStore, 'transition'>,
  outbox: Pick<WebhookOutbox, 'enqueue' | 'row'>,
  request: Omit<TransitionRequest, 'event'>,
  webhookUrl: string | null | undefined,
): Promise<Settlement | null> {
  let eventId: string | undefined;
  const moved = await settlements.transition({
    ...request,
    event:
      isFinal(request.to) && webhookUrl
        ? (row) => {
            const event = outbox.row(finalSettlementEvent(row, webhookUrl));
            eventId = event.id;
            return event;
          }
        : undefined,
  });
  if (moved && eventId) await outbox.enqueue(eventId).catch(() => undefined);
  return moved;
}
