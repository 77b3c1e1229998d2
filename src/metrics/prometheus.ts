// A small writer for the Prometheus text exposition format, version 0.0.4:
// one HELP and one TYPE line per family, then its samples.
// https://prometheus.io/docs/instrumenting/exposition_formats/#text-based-format

export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

export interface Sample {
  labels?: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  help: string;
  type: "counter" | "gauge";
  samples: Sample[];
}

// HELP text escapes backslash and newline; label values also escape the double quote.
const escapeHelp = (text: string): string => text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
const escapeLabel = (text: string): string => text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');

function formatValue(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  return String(value);
}

function formatLabels(labels: Record<string, string> | undefined): string {
  const entries = Object.entries(labels ?? {});
  if (entries.length === 0) return "";
  return `{${entries.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(",")}}`;
}

export function renderFamilies(families: readonly Family[]): string {
  const lines: string[] = [];
  for (const f of families) {
    lines.push(`# HELP ${f.name} ${escapeHelp(f.help)}`, `# TYPE ${f.name} ${f.type}`);
    for (const s of f.samples) lines.push(`${f.name}${formatLabels(s.labels)} ${formatValue(s.value)}`);
  }
  return `${lines.join("\n")}\n`;
}
