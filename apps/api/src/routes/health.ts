import { Router } from 'express';
import { apiRouter } from '../api-router';

/** Something /readyz depends on: Postgres, Redis, each enabled RPC. */
export interface ReadinessCheck {
  name: string;
  /** throws when not ready; may return which of its parts are down (e.g. one RPC endpoint of several) while still ready */
  check(): Promise<void | ReadinessParts>;
}

/** parts of one dependency by name (an RPC endpoint's position, never its URL) and whether each answers */
export type ReadinessParts = Record<string, 'ok' | 'down'>;

const CHECK_TIMEOUT_MS = 2_000;

async function runCheck(check: ReadinessCheck): Promise<{ name: string; ok: boolean; error?: string; parts?: ReadinessParts }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
  });
  try {
    const parts = await Promise.race([check.check(), timeout]);
    return { name: check.name, ok: true, parts: parts ?? undefined };
  } catch (err) {
    return { name: check.name, ok: false, error: err instanceof Error ? err.message : String(err) };
  } finally {
    clearTimeout(timer);
  }
}

export function healthRoutes(checks: readonly ReadinessCheck[]): Router {
  const router = apiRouter();
  // Liveness: the process answers. Nothing else, so an orchestrator never restarts us for a dependency.
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    const results = await Promise.all(checks.map(runCheck));
    const failed = results.filter((r) => !r.ok);
    const body = {
      status: failed.length === 0 ? 'ready' : 'not_ready',
      // the name only: an error's text can carry an RPC URL with its provider's key (ethers puts it there)
      checks: Object.fromEntries(results.map((r) => [r.name, r.ok ? 'ok' : 'failed'])),
      // e.g. { "rpc:eip155:84532": { "1": "down", "2": "ok" } }: ready, with a part to look at
      ...(results.some((r) => r.parts) ? { parts: Object.fromEntries(results.filter((r) => r.parts).map((r) => [r.name, r.parts])) } : {}),
    };
    res.status(failed.length === 0 ? 200 : 503).json(body);
  });
  return router;
}
