/** One structured JSON log line. Callers pass only non-secret fields. */
export function logLine(fields: object): void {
  console.log(lineOf(fields));
}

const lineOf = (fields: object): string => JSON.stringify({ at: new Date().toISOString(), ...fields });

/**
 * What one pass's lines may take of the 256 KB of log events Cloudflare keeps per Worker invocation (it drops
 * the rest): the remainder is room for the pass's own summary line and the few lines written outside the budget.
 */
export const LOG_BYTES_PER_PASS = 192_000;
/** What the platform adds to each line as a log event (timestamp, level, wrapping), counted with the line. */
const EVENT_OVERHEAD_BYTES = 64;

export interface LogBudget {
  /** Writes the line if it fits in what is left of the budget; else counts it, by its `msg`, as summarized. */
  line(fields: object): void;
  /** Bytes written through the budget (each line with its overhead), and the lines summarized by `msg` (empty: none). */
  spent(): { bytes: number; summarized: Record<string, number> };
}

/**
 * One invocation's log budget. Once a line does not fit, it and every later one is only counted: the sweep line
 * says how many of each were left out, and each runner's story (the admin views) keeps its decisions anyway.
 */
export function logBudget(maxBytes = LOG_BYTES_PER_PASS, write: (line: string) => void = (line) => console.log(line)): LogBudget {
  const encoder = new TextEncoder();
  let bytes = 0;
  let full = false;
  const summarized: Record<string, number> = {};
  return {
    line(fields) {
      if (!full) {
        const text = lineOf(fields);
        const cost = encoder.encode(text).length + EVENT_OVERHEAD_BYTES;
        if (bytes + cost <= maxBytes) {
          bytes += cost;
          write(text);
          return;
        }
        full = true;
      }
      const msg = String((fields as { msg?: unknown }).msg ?? "line");
      summarized[msg] = (summarized[msg] ?? 0) + 1;
    },
    spent: () => ({ bytes, summarized: { ...summarized } }),
  };
}
