import { setTimeout as sleep } from 'node:timers/promises';
import type { Settlement } from '@facilitator/db';
import type { TestStack } from '../support/test-stack';

/**
 * What @x402/core's resource server does with a settle answer: success serves the buyer; a pending answer that
 * names a transaction is retried once; anything else (a pending answer without one included) refuses the buyer.
 */
export function servedOrRetried(body: { success?: boolean; errorReason?: string; transaction?: string }): boolean {
  return body.success === true || (body.errorReason === 'settlement_pending' && body.transaction !== '');
}

/** The settlement, once it is settled or failed. */
export async function untilEnded(stack: TestStack, settlementId: string, timeoutMs: number): Promise<Settlement> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = await stack.db.prisma.settlement.findUniqueOrThrow({ where: { id: settlementId } });
    if (s.state === 'settled' || s.state === 'failed') return s;
    if (Date.now() > deadline) throw new Error(`settlement ${settlementId} still ${s.state} after ${timeoutMs} ms`);
    await sleep(200);
  }
}
