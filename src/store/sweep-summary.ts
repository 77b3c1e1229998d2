// The last sweep's figures, for /metrics and the admin page. Kept as the
// metadata of one KV key, found by the same list pass that reads the facts.
// Written at most every 5 minutes unless the sweep deleted something or its
// errors changed: a write a minute would exceed the free plan's 1,000 a day.
import type { FactsKV, KvCounter } from "./kv-facts.ts";

export const SWEEP_SUMMARY_KEY = "meta/last-sweep";
const REWRITE_AFTER_MS = 5 * 60_000;

export interface SweepSummary {
  type: "sweep-summary";
  at: string;
  durationMs: number;
  checked: number;
  deleted: number;
  kept: number;
  waiting: number;
  gone: number;
  errors: Record<string, number>; // by kind: cluster, github, redelivery
  githubCalls: number;
  rateLimitRemaining: number | null;
  dryRun: boolean;
}

export function isSweepSummary(value: unknown): value is SweepSummary {
  return typeof value === "object" && value !== null && (value as { type?: unknown }).type === "sweep-summary";
}

export function summaryWorthWriting(next: SweepSummary, previous: SweepSummary | undefined): boolean {
  if (!previous) return true;
  if (next.deleted > 0) return true;
  if (JSON.stringify(next.errors) !== JSON.stringify(previous.errors)) return true;
  return Date.parse(next.at) - Date.parse(previous.at) >= REWRITE_AFTER_MS;
}

export async function writeSweepSummary(kv: FactsKV, summary: SweepSummary, counter?: KvCounter): Promise<void> {
  if (counter) counter.puts++;
  await kv.put(SWEEP_SUMMARY_KEY, "", { metadata: summary });
}
