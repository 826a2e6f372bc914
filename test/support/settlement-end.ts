import type { TestStack } from './test-stack';
import { until } from './until';

/** The settlement once it has ended (`settled` or `failed`), as the worker left it. */
export async function settlementEnd(stack: Pick<TestStack, 'db'>, settlementId: string, timeoutMs = 20_000) {
  const read = () => stack.db.prisma.settlement.findUniqueOrThrow({ where: { id: settlementId } });
  await until(`settlement ${settlementId} to end`, async () => ['settled', 'failed'].includes((await read()).state), timeoutMs);
  return read();
}
