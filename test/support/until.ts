import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Polls `check` until it holds; the failure names what was awaited, and what `explain` says of the
 * state at that moment (open settlements, a process's warnings) when given.
 */
export async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000, explain?: () => Promise<string>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${explain ? `; ${await explain()}` : ''}`);
    await sleep(50);
  }
}
