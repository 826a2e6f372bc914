import type { Pool } from 'pg';
import { runQuery, type Row } from './pg-query';

/** A window of the status page: the last `seconds` before the statement's now(). */
export interface StatusWindow {
  name: string;
  seconds: number;
}

/** Latency of one network in one window, in milliseconds (null p50/p95 when nothing happened). */
export interface WindowLatency {
  window: string;
  chainId: number;
  count: number;
  p50Ms: number | null;
  p95Ms: number | null;
}

export interface WindowSettleOutcomes extends WindowLatency {
  /** `count` settled; this many failed */
  failed: number;
}

export interface WaitingCount {
  chainId: number;
  reason: string;
  count: number;
  oldestSince: Date | null;
}

/** The windows as the two arrays the statements unnest (one fixed prepared statement for any windows). */
function windowParameters(windows: readonly StatusWindow[]): [string[], number[]] {
  return [windows.map((w) => w.name), windows.map((w) => w.seconds)];
}

/** The rows of a windowed statement, their numbers as pg returns them (count as int, percentiles as float). */
export async function windowRows(pool: Pool, name: string, text: string, windows: readonly StatusWindow[]): Promise<Row[]> {
  return windows.length === 0 ? [] : runQuery(pool, { name, text, values: windowParameters(windows) });
}

export const optionalMs = (value: unknown): number | null => (value == null ? null : Math.round(Number(value) * 10) / 10);
