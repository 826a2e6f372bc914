// The Grafana dashboard must only chart series the services really export.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createMetrics } from '@facilitator/metrics';

it('every series the dashboard queries is one we export', async () => {
  const dashboard = JSON.parse(readFileSync(path.resolve(__dirname, '../docs/grafana-dashboard.json'), 'utf8'));
  const exprs: string[] = dashboard.panels.flatMap((p: { targets: Array<{ expr: string }> }) => p.targets.map((t) => t.expr));
  const used = new Set(exprs.flatMap((e) => e.match(/x402_[a-z_]+/g) ?? []).map((n) => n.replace(/_(bucket|count|sum)$/, '')));
  const metrics = createMetrics('api');
  const exported = new Set((await metrics.registry.getMetricsAsJSON()).map((m) => m.name));
  expect([...used].filter((name) => !exported.has(name))).toEqual([]);
  expect(used.size).toBeGreaterThanOrEqual(10);
});
