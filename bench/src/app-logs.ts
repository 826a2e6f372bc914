// What our apps (and the reference facilitator) say is wrong while a benchmark measures: every line at warn
// or error level, and any line that is not JSON (a crash's stack trace).
import type { ChildProcess } from 'node:child_process';

/** Lines an app wrote at warn or error level (JSON logs), and any line that is not JSON (a crash's stack). */
export interface LogProblems {
  warnings: number;
  errors: number;
  /** the distinct messages, with how often each came, first seen first (at most 20 kept) */
  messages: Array<{ level: string; message: string; count: number; sample: string }>;
}

/** Watches an app's stdout and stderr for warn and error lines until the process ends. */
export function watchProblems(child: ChildProcess): { problems(): LogProblems } {
  const found: LogProblems = { warnings: 0, errors: 0, messages: [] };
  const record = (level: string, message: string, line: string) => {
    if (level === 'warn') found.warnings++;
    else found.errors++;
    const known = found.messages.find((m) => m.level === level && m.message === message);
    if (known) known.count++;
    else if (found.messages.length < 20) found.messages.push({ level, message, count: 1, sample: line.slice(0, 1_500) });
  };
  const watch = (stream: NodeJS.ReadableStream | null) => {
    if (!stream) return;
    let partial = '';
    stream.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        if (!line.trim()) continue;
        let parsed: { level?: unknown; message?: unknown } | undefined;
        try {
          parsed = JSON.parse(line) as { level?: unknown; message?: unknown };
        } catch {
          parsed = undefined;
        }
        if (!parsed || typeof parsed !== 'object') {
          record('error', 'non-JSON output', line);
          continue;
        }
        const level = String(parsed.level ?? '');
        if (level === 'warn' || level === 'error' || level === 'fatal') record(level === 'warn' ? 'warn' : 'error', String(parsed.message ?? ''), line);
      }
    });
  };
  watch(child.stdout);
  watch(child.stderr);
  return { problems: () => structuredClone(found) };
}

export function mergeProblems(list: LogProblems[]): LogProblems {
  const merged: LogProblems = { warnings: 0, errors: 0, messages: [] };
  for (const p of list) {
    merged.warnings += p.warnings;
    merged.errors += p.errors;
    for (const m of p.messages) {
      const known = merged.messages.find((k) => k.level === m.level && k.message === m.message);
      if (known) known.count += m.count;
      else merged.messages.push({ ...m });
    }
  }
  return merged;
}
