// What the Grafana dashboard asks Prometheus for, read from its PromQL: each series selector with its label
// matchers, and the labels it groups by. Enough PromQL for our dashboard, not a parser of the language.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Sample } from './prometheus-text';

export const DASHBOARD_FILE = path.resolve(__dirname, '../../docs/grafana-dashboard.json');

export interface DashboardQuery {
  panel: string;
  expr: string;
  /** series the expression selects, e.g. x402_queue_jobs with matchers [{ label: 'state', op: '=~', value: '…' }] */
  selectors: Array<{ metric: string; matchers: Array<{ label: string; op: '=' | '!=' | '=~' | '!~'; value: string }> }>;
  /** labels of `sum by (…)`, `max by (…)` … */
  groupedBy: string[];
}

export function dashboardQueries(file = DASHBOARD_FILE): DashboardQuery[] {
  const dashboard = JSON.parse(readFileSync(file, 'utf8')) as { panels: Array<{ title: string; targets?: Array<{ expr: string }> }> };
  return dashboard.panels.flatMap((panel) =>
    (panel.targets ?? []).map(({ expr }) => ({
      panel: panel.title,
      expr,
      selectors: [...expr.matchAll(/\b(x402_[a-z0-9_]+)(?:\{([^}]*)\})?/g)].map((m) => ({
        metric: m[1],
        matchers: [...(m[2] ?? '').matchAll(/(\w+)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"/g)].map((x) => ({
          label: x[1],
          op: x[2] as '=' | '!=' | '=~' | '!~',
          value: x[3],
        })),
      })),
      groupedBy: [...expr.matchAll(/\bby\s*\(([^)]*)\)/g)].flatMap((m) => m[1].split(',').map((l) => l.trim()).filter(Boolean)),
    })),
  );
}

function matches(sample: Sample, matcher: DashboardQuery['selectors'][number]['matchers'][number]): boolean {
  const value = sample.labels[matcher.label] ?? '';
  const regex = new RegExp(`^(?:${matcher.value})$`);
  switch (matcher.op) {
    case '=':
      return value === matcher.value;
    case '!=':
      return value !== matcher.value;
    case '=~':
      return regex.test(value);
    case '!~':
      return !regex.test(value);
  }
}

/**
 * What in the dashboard the scraped samples cannot answer: a selector no sample matches (a series we do
 * not export, or a label value we never write) and a grouping label the selected samples do not carry.
 */
export function unansweredQueries(queries: readonly DashboardQuery[], samples: readonly Sample[]): string[] {
  const problems: string[] = [];
  for (const query of queries) {
    for (const selector of query.selectors) {
      const selected = samples.filter((s) => s.name === selector.metric && selector.matchers.every((m) => matches(s, m)));
      if (selected.length === 0) {
        problems.push(`${query.panel}: no series ${selector.metric}${selector.matchers.map((m) => ` ${m.label}${m.op}"${m.value}"`).join('')}`);
        continue;
      }
      for (const label of query.groupedBy) {
        if (!selected.some((s) => label in s.labels)) problems.push(`${query.panel}: ${selector.metric} has no label "${label}"`);
      }
    }
  }
  return problems;
}
