// A merchant with a history, made the way production makes one: payments verified with a webhook URL and
// settled by the worker, the first webhook attempt refused so a delivery shows a retry. And the page's
// session calls, signed with the merchant's key as the page signs them.
import type { BaseWallet } from 'ethers';
import { MerchantAction } from '@facilitator/merchants';
import { merchantProof } from './merchant-client';
import type { TestStack } from './test-stack';
import type { WebhookReceiver } from './webhook-receiver';
import { until } from './until';

// shared with the suites that import it from here
export { until };

/** Short retry delays: a refused first attempt is retried within a second. */
export const FAST_WEBHOOK_RETRIES = { WEBHOOK_RETRY_DELAYS_MS: '200,400,600,800,1000', WEBHOOK_RECEIVER_CONCURRENCY: '20', WEBHOOK_BREAKER_FAILURES: '1000' };

/**
 * `count` payments to the devnet merchant, each verified with a webhook to `endpoint` (whose first request
 * is answered 503) and settled; resolves once every delivery is recorded as delivered.
 */
export async function settlePaymentsWithWebhooks(stack: TestStack, receiver: WebhookReceiver, endpoint: string, count: number): Promise<string[]> {
  const url = receiver.endpoint(endpoint, (attempt, _req, res) => res.writeHead(attempt === 1 ? 503 : 200).end());
  const settlementIds: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const payment = await stack.payment();
    const verified = await stack.http.post('/v1/verify').send(payment.formB({ webhook_url: url }));
    if (verified.status !== 200) throw new Error(`verify: ${verified.status} ${JSON.stringify(verified.body)}`);
    const settled = await stack.http.post('/v1/settle').send({ verification_id: verified.body.verification_id, destination_address: stack.devnet.accounts.merchant.address });
    if (settled.status !== 200) throw new Error(`settle: ${settled.status} ${JSON.stringify(settled.body)}`);
    settlementIds.push(settled.body.settlement_id as string);
  }
  // verification.completed and settlement.completed for each, one of them retried once
  await receiver.waitFor(endpoint, 2 * count + 1, 60_000);
  await until('every delivery recorded as delivered', async () => {
    const { rows } = await stack.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_events WHERE status = 'delivered'`);
    return rows[0].n === 2 * count;
  });
  return settlementIds;
}

/** Signs in as the page does (a session.create request signed with the merchant's key). */
export async function signIn(stack: TestStack, wallet: BaseWallet): Promise<string> {
  const proof = await merchantProof(wallet, wallet.address, MerchantAction.CreateSession);
  const res = await stack.http.post(`/v1/merchants/${wallet.address}/session`).send({ proof });
  if (res.status !== 201) throw new Error(`sign-in: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.session_token as string;
}
