// Beyond one Redis: the queues on a 3-node Redis Cluster (REDIS_CLUSTER_NODES), end to end.
import { startRedisCluster, type RedisCluster } from './support/redis-cluster';
import { startTestStack, TestStack } from './support/test-stack';
import { describeWithRedisServer } from './support/test-services';
import { WebhookReceiver } from './support/webhook-receiver';

describeWithRedisServer('queues on a 3-node Redis Cluster', () => {
  let cluster: RedisCluster;
  let stack: TestStack;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    cluster = await startRedisCluster();
    receiver = await new WebhookReceiver().start();
    stack = await startTestStack({ env: { QUEUE_BACKEND: 'redis', REDIS_CLUSTER_NODES: cluster.spec } });
    await stack.startWorker();
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
    await receiver?.stop();
    await cluster?.stop();
  });

  it('a settlement and its webhook go through end to end on a Redis Cluster', async () => {
    expect(stack.config.queuePrefix).toMatch(/^\{t[0-9a-f]+\}$/);
    const p = await stack.payment();
    const url = receiver.endpoint('cluster');
    const v = await stack.http.post('/v1/verify').send(p.formB({ webhook_url: url }));
    expect(v.status).toBe(200);
    const s = await stack.http.post('/v1/settle').send({ verification_id: v.body.verification_id, destination_address: stack.devnet.accounts.merchant.address });
    expect(s.status).toBe(200);
    const deliveries = await receiver.waitFor('cluster', 2);
    expect(deliveries.map((d) => d.body.event_type)).toEqual(['verification.completed', 'settlement.completed']);
    const status = await stack.http.get(`/v1/settlements/${s.body.settlement_id}`);
    expect(status.body.status).toBe('settled');
    const ready = await stack.http.get('/readyz');
    expect(ready.body.checks.redis).toBe('ok');
  }, 60_000);
});
