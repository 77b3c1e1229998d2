// The metric contract and a PromQL checker for infra/monitoring's tests:
// METRIC_NAMES from src/metrics/metric-names.ts, with the types, labels and
// label values its comments declare, and expressions parsed by Prometheus's
// own Lezer grammar (@prometheus-io/lezer-promql) to read their selectors.
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parser } from "@prometheus-io/lezer-promql";
import { METRIC_NAMES } from "../../../src/metrics/metric-names.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

// ---- The contract: src/metrics/metric-names.ts, names from the code, types and labels from its comments.

export interface Family {
  type: "counter" | "gauge";
  labels: string[];
}
/** Labels every scraped series has besides its own: Prometheus adds them. */
const TARGET_LABELS = ["job", "instance"];

function readContract(): { families: Map<string, Family>; values: Map<string, Set<string>> } {
  const source = readFileSync(join(ROOT, "src/metrics/metric-names.ts"), "utf8");
  const families = new Map<string, Family>();
  const values = new Map<string, Set<string>>(); // label -> the values some comment lists for it
  // `"name", // counter {a, b}: v1, v2 (a note)`: the listed values belong to the last label named.
  const line = /^\s*"(\w+)",\s*\/\/\s*(counter|gauge)\b\s*(?:\{([^}]*)\})?\s*(?::\s*(.*))?$/;
  for (const text of source.split("\n")) {
    const m = line.exec(text);
    if (!m) continue;
    const [, name, type, labelList, rest] = m;
    const labels = labelList ? labelList.split(",").map((l) => l.trim()) : [];
    families.set(name!, { type: type as Family["type"], labels });
    const last = labels.at(-1);
    if (last !== undefined && rest) {
      const listed = rest
        .replace(/\([^)]*\)/g, "")
        .split(",")
        .map((v) => v.trim())
        .filter((v) => v !== "");
      const set = values.get(last) ?? new Set<string>();
      for (const v of listed) set.add(v);
      values.set(last, set);
    }
  }
  return { families, values };
}
export const CONTRACT = readContract();

// ---- PromQL: parse with Prometheus's Lezer grammar and read the selectors.

type Node = ReturnType<typeof parser.parse>["topNode"];
const GRAFANA_RANGE_VARIABLES = /\$__rate_interval|\$__interval|\$__range/g;
const COUNTER_FUNCTIONS = ["rate", "increase", "irate"];

interface Selector {
  metric: string | undefined;
  matchers: { label: string; op: string; value: string }[];
  /** The function whose range argument this selector is (rate, increase, ...), or the one it is a plain argument of. */
  rangeFunction: string | undefined;
  argumentOf: string | undefined;
}
interface Analysis {
  syntaxErrors: string[];
  selectors: Selector[];
  groupingLabels: string[];
}

function analyse(expr: string): Analysis {
  const tree = parser.parse(expr);
  const text = (n: Node): string => expr.slice(n.from, n.to);
  const out: Analysis = { syntaxErrors: [], selectors: [], groupingLabels: [] };
  const functionOf = (body: Node | null): string | undefined => {
    if (body?.name !== "FunctionCallBody" || body.parent?.name !== "FunctionCall") return undefined;
    const id = body.parent.getChild("FunctionIdentifier");
    return id ? text(id) : undefined;
  };
  tree.iterate({
    enter: (ref) => {
      const node = ref.node;
      if (node.type.isError) out.syntaxErrors.push(`at ${node.from}: ${JSON.stringify(expr.slice(Math.max(0, node.from - 10), node.from + 10))}`);
      if (node.name === "GroupingLabels") for (const l of node.getChildren("LabelName")) out.groupingLabels.push(text(l));
      if (node.name !== "VectorSelector") return;
      const id = node.getChild("Identifier");
      const matchers: Selector["matchers"] = [];
      for (const m of node.getChild("LabelMatchers")?.getChildren("UnquotedLabelMatcher") ?? []) {
        const [label, op, value] = [m.getChild("LabelName"), m.getChild("MatchOp"), m.getChild("StringLiteral")];
        if (!label || !op || !value) throw new Error(`a label matcher without label, operator or value in ${expr}`);
        matchers.push({ label: text(label), op: text(op), value: parseString(text(value)) });
      }
      const quoted = node.getChild("LabelMatchers")?.getChildren("QuotedLabelMatcher") ?? [];
      if (quoted.length > 0) out.syntaxErrors.push(`a quoted label or metric name in ${expr}: name metrics plainly`);
      const inRange = node.parent?.name === "MatrixSelector";
      out.selectors.push({
        metric: id ? text(id) : undefined,
        matchers,
        rangeFunction: inRange ? functionOf(node.parent?.parent ?? null) : undefined,
        argumentOf: inRange ? undefined : functionOf(node.parent),
      });
    },
  });
  return out;
}

function parseString(literal: string): string {
  if (literal.startsWith('"')) return JSON.parse(literal) as string;
  return literal.slice(1, -1); // '...' or `...`
}

/** Every way an expression breaks the contract, in words; empty when it keeps it. */
export function contractProblems(expr: string): string[] {
  const problems: string[] = [];
  const unsupported = expr.replace(GRAFANA_RANGE_VARIABLES, "").match(/\$(?!job\b)\w*/g);
  if (unsupported) problems.push(`unknown Grafana variable ${unsupported.join(", ")}`);
  const { syntaxErrors, selectors, groupingLabels } = analyse(expr.replace(GRAFANA_RANGE_VARIABLES, "5m"));
  problems.push(...syntaxErrors.map((e) => `syntax error ${e}`));
  const declared = new Set(TARGET_LABELS);
  for (const s of selectors) {
    if (s.metric === undefined) {
      problems.push("a selector without a metric name");
      continue;
    }
    if (s.matchers.some((m) => m.label === "__name__")) problems.push(`${s.metric}: a __name__ matcher`);
    if (!(METRIC_NAMES as readonly string[]).includes(s.metric)) {
      problems.push(`${s.metric} is not in METRIC_NAMES`);
      continue;
    }
    const family = CONTRACT.families.get(s.metric);
    if (family === undefined) {
      problems.push(`${s.metric} has no type comment in metric-names.ts`);
      continue;
    }
    for (const l of family.labels) declared.add(l);
    for (const m of s.matchers) {
      if (![...TARGET_LABELS, ...family.labels].includes(m.label)) problems.push(`${s.metric} has no label ${m.label}`);
      const allowed = CONTRACT.values.get(m.label);
      if (m.op === "=" && allowed && !allowed.has(m.value)) problems.push(`${s.metric}{${m.label}="${m.value}"}: not one of ${[...allowed].join(", ")}`);
    }
    const ofCounter = s.rangeFunction !== undefined && COUNTER_FUNCTIONS.includes(s.rangeFunction);
    if (family.type === "counter" && !ofCounter && s.argumentOf !== "absent") {
      problems.push(`${s.metric} is a counter: use it inside ${COUNTER_FUNCTIONS.join(", ")} (or absent)`);
    }
    if (family.type === "gauge" && ofCounter) problems.push(`${s.metric} is a gauge: ${s.rangeFunction}() is for counters`);
  }
  for (const l of groupingLabels) if (!declared.has(l)) problems.push(`grouping by ${l}, a label none of its metrics has`);
  return problems;
}

export const metricsOf = (expr: string): string[] =>
  analyse(expr.replace(GRAFANA_RANGE_VARIABLES, "5m")).selectors.flatMap((s) => (s.metric ? [s.metric] : []));
