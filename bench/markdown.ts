/** A Markdown table, padded so it reads as well in a terminal as rendered. */
export function markdownTable(headers: readonly string[], rows: readonly (readonly string[])[], rightAligned: readonly number[] = []): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const cell = (text: string, i: number) => (rightAligned.includes(i) ? text.padStart(widths[i]!) : text.padEnd(widths[i]!));
  const line = (cells: readonly string[]) => `| ${cells.map((c, i) => cell(c, i)).join(" | ")} |`;
  const rule = `|${widths.map((w, i) => (rightAligned.includes(i) ? `${"-".repeat(w + 1)}:` : "-".repeat(w + 2))).join("|")}|`;
  return [line(headers), rule, ...rows.map(line)].join("\n");
}

/** 12,345 */
export const int = (n: number): string => (Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "n/a");

/** A number with `digits` decimals, or n/a. */
export const fixed = (n: number, digits: number): string => (Number.isFinite(n) ? n.toFixed(digits) : "n/a");

/** Seconds as "5 min 30 s" or "42 s". */
export function duration(ms: number): string {
  if (!Number.isFinite(ms)) return "n/a";
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, "0")} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")} min`;
}
