// infra/monitoring: the alert rules load as a PrometheusRule, the scrape as a
// ScrapeConfig (Cloudflare) or a PodMonitor (in the cluster, with alert texts for that home), the dashboard is a well-formed Grafana dashboard, every PromQL
// expression parses (Prometheus's own Lezer grammar), and every metric they
// name is one that /metrics exposes: METRIC_NAMES in src/metrics/metric-names.ts,
// with the types, labels and label values its comments declare.
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { PrometheusRule } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule";
import { PodMonitor } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PodMonitor";
import { ScrapeConfig } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1alpha1/ScrapeConfig";
import { parse as parseYaml } from "yaml";
import { describe, expect, it } from "vitest";
import { SWEEP_SLACK_SECONDS } from "../../../src/config/home.ts";
import { METRIC_NAMES } from "../../../src/metrics/metric-names.ts";
import { type KubeObject, renderKustomization } from "./infra-rbac.ts";
import { hasKubectl, kustomize } from "./kubectl.ts";
import { CONTRACT, contractProblems, metricsOf } from "./promql-contract.ts";

// biome-ignore lint/suspicious/noExplicitAny: a rendered manifest is walked by its known fields.
type Any = any;

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const DIR = join(ROOT, "infra/monitoring");
const read = (file: string): string => readFileSync(join(DIR, file), "utf8");

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
function object(v: unknown, where: string): Json {
  if (!isObject(v)) throw new Error(`${where} is not an object`);
  return v;
}
function array(v: unknown, where: string): unknown[] {
  if (!Array.isArray(v)) throw new Error(`${where} is not a list`);
  return v;
}
function onlyKeys(obj: Json, allowed: readonly string[], where: string): void {
  for (const key of Object.keys(obj)) if (!allowed.includes(key)) throw new Error(`${where}: unexpected field ${JSON.stringify(key)}`);
}

describe("the checker itself", () => {
  it("reads a type, and the labels and their values, for every name in METRIC_NAMES", () => {
    expect([...CONTRACT.families.keys()].sort()).toEqual([...METRIC_NAMES].sort());
    for (const [name, f] of CONTRACT.families) expect(f.type, name).toBe(name.endsWith("_total") ? "counter" : "gauge");
    expect(CONTRACT.families.get("arc_reaper_webhook_deliveries_total")?.labels).toEqual(["event", "outcome"]);
    expect([...(CONTRACT.values.get("kind") ?? [])]).toEqual(["cluster", "github", "redelivery", "agent"]);
    expect(CONTRACT.values.get("outcome")?.has("rejected")).toBe(true);
  });

  it("flags a metric not in METRIC_NAMES, broken syntax, a wrong label or value, and a counter or gauge used wrongly", () => {
    expect(contractProblems("sum(rate(arc_reaper_sweeps_total[5m]))")).toEqual([]);
    expect(contractProblems("rate(arc_reaper_sweep_total[5m]) > 0")).toEqual(["arc_reaper_sweep_total is not in METRIC_NAMES"]);
    expect(contractProblems('{__name__="arc_reaper_paused"}')).toEqual(["a selector without a metric name"]);
    expect(contractProblems("sum(rate(arc_reaper_sweeps_total[5m])").join()).toMatch(/^syntax error/);
    expect(contractProblems("arc_reaper_paused >")).toEqual([expect.stringMatching(/^syntax error/)]);
    expect(contractProblems('arc_reaper_last_sweep_errors{kind="clusters"} > 0')).toEqual([
      'arc_reaper_last_sweep_errors{kind="clusters"}: not one of cluster, github, redelivery, agent',
    ]);
    expect(contractProblems('arc_reaper_paused{state="running"}')).toEqual(["arc_reaper_paused has no label state"]);
    expect(contractProblems("sum by (cause) (arc_reaper_runners)")).toEqual(["grouping by cause, a label none of its metrics has"]);
    expect(contractProblems("arc_reaper_sweeps_total > 0")).toEqual([expect.stringContaining("is a counter")]);
    expect(contractProblems("increase(arc_reaper_paused[1h])")).toEqual([expect.stringContaining("is a gauge")]);
    expect(contractProblems("rate(arc_reaper_sweeps_total[$__rate_interval])")).toEqual([]);
    expect(contractProblems("rate(arc_reaper_sweeps_total[$interval])")).toContain("unknown Grafana variable $interval");
  });
});

// ---- The alert rules.

const ruleDocs = parseYaml(read("rules/prometheus-rule.yaml")) as unknown;
const ruleObject = object(ruleDocs, "prometheus-rule.yaml");
const DURATION = /^(\d+(ms|s|m|h|d|w|y))+$/;
const seconds = (d: string): number =>
  [...d.matchAll(/(\d+)(ms|s|m|h|d|w|y)/g)].reduce(
    (sum, [, n, u]) => sum + Number(n) * { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400, w: 604800, y: 31536000 }[u as "s"],
    0,
  );

interface Alert {
  alert: string;
  expr: string;
  for?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

function alertsOf(obj: Json): Alert[] {
  onlyKeys(obj, ["apiVersion", "kind", "metadata", "spec"], "PrometheusRule");
  const spec = object(obj["spec"], "spec");
  onlyKeys(spec, ["groups"], "spec");
  const alerts: Alert[] = [];
  for (const [gi, g] of array(spec["groups"], "spec.groups").entries()) {
    const group = object(g, `group ${gi}`);
    onlyKeys(group, ["name", "interval", "rules"], `group ${gi}`);
    expect(group["name"]).toEqual(expect.any(String));
    for (const [ri, r] of array(group["rules"], `group ${gi} rules`).entries()) {
      const rule = object(r, `rule ${ri}`);
      onlyKeys(rule, ["alert", "expr", "for", "keep_firing_for", "labels", "annotations"], `rule ${ri}`);
      const name = rule["alert"];
      if (typeof name !== "string" || !/^ArcReaper[A-Z][A-Za-z]+$/.test(name)) throw new Error(`rule ${ri}: alert name ${JSON.stringify(name)}`);
      if (typeof rule["expr"] !== "string") throw new Error(`${name}: expr is not a string`);
      if (rule["for"] !== undefined && (typeof rule["for"] !== "string" || !DURATION.test(rule["for"]))) throw new Error(`${name}: for is not a duration`);
      const labels = object(rule["labels"], `${name} labels`);
      const annotations = object(rule["annotations"], `${name} annotations`);
      if (!["critical", "warning"].includes(String(labels["severity"]))) throw new Error(`${name}: severity must be critical or warning`);
      onlyKeys(annotations, ["summary", "description", "runbook_url"], `${name} annotations`);
      for (const key of ["summary", "description"]) {
        const v = annotations[key];
        if (typeof v !== "string" || v.trim() === "") throw new Error(`${name}: annotation ${key} is empty`);
        // Go templates: every {{ has its }}, and they use only $value and $labels.
        const opens = v.split("{{").length - 1;
        if (opens !== v.split("}}").length - 1 || /\{\{(?![^}]*\$(value|labels))/.test(v)) throw new Error(`${name}: ${key} has a malformed template`);
      }
      alerts.push({
        alert: name,
        expr: rule["expr"],
        ...(rule["for"] !== undefined ? { for: rule["for"] as string } : {}),
        labels: labels as Record<string, string>,
        annotations: annotations as Record<string, string>,
      });
    }
  }
  return alerts;
}

describe("infra/monitoring/rules/prometheus-rule.yaml", () => {
  it("loads as a monitoring.coreos.com/v1 PrometheusRule", () => {
    expect(ruleObject["apiVersion"]).toBe("monitoring.coreos.com/v1");
    expect(ruleObject["kind"]).toBe("PrometheusRule");
    const model = new PrometheusRule(ruleObject as unknown as ConstructorParameters<typeof PrometheusRule>[0]);
    expect(() => model.validate()).not.toThrow();
    expect(() => alertsOf(ruleObject)).not.toThrow();
  });

  it("is refused when it is not a PrometheusRule", () => {
    const broken = structuredClone(ruleObject);
    (object(broken["spec"], "spec")["groups"] as Json[])[0]!["rules"] = "not a list";
    expect(() => new PrometheusRule(broken as unknown as ConstructorParameters<typeof PrometheusRule>[0]).validate()).toThrow();
    const typo = structuredClone(ruleObject);
    ((object(typo["spec"], "spec")["groups"] as Json[])[0]!["rules"] as Json[])[0]!["fro"] = "5m";
    expect(() => alertsOf(typo)).toThrow(/unexpected field "fro"/);
  });

  const alerts = alertsOf(ruleObject);
  const byName = new Map(alerts.map((a) => [a.alert, a]));

  it("has unique alert names", () => {
    expect(byName.size).toBe(alerts.length);
  });

  it.each(alerts.map((a) => [a.alert, a.expr] as const))("%s: its expression parses and uses only metrics /metrics exposes", (_, expr) => {
    expect(contractProblems(expr)).toEqual([]);
    expect(metricsOf(expr).length).toBeGreaterThan(0);
  });

  it("alerts on what issue 12 asks for, with those thresholds", () => {
    const has = (name: string, metrics: string[], forDuration: string | undefined, threshold: RegExp) => {
      const a = byName.get(name);
      expect(a, name).toBeDefined();
      expect(new Set(metricsOf(a!.expr)), name).toEqual(new Set(metrics));
      expect(a!.for, name).toBe(forDuration);
      expect(a!.expr, name).toMatch(threshold);
    };
    // Issue 46: by arc-reaper's own clock (a step of it, or a skew with Prometheus's, hides nothing), 240 s past the period of either home.
    has(
      "ArcReaperNoSweep",
      ["arc_reaper_last_sweep_age_seconds", "arc_reaper_sweep_every_seconds"],
      undefined,
      /^arc_reaper_last_sweep_age_seconds > arc_reaper_sweep_every_seconds \+ 240$/,
    );
    expect(byName.get("ArcReaperNoSweep")!.expr).toContain(`+ ${SWEEP_SLACK_SECONDS}`); // where /healthz/deep calls sweeps late
    has("ArcReaperClusterErrors", ["arc_reaper_last_sweep_errors"], "10m", /\{kind="cluster"\} > 0$/);
    has(
      "ArcReaperGitHubRateLimitLow",
      ["arc_reaper_github_rate_limit_remaining", "arc_reaper_github_rate_limit_limit"],
      "5m",
      /remaining \/ arc_reaper_github_rate_limit_limit < 0\.10$/,
    );
    has("ArcReaperDeletionsHeldBack", ["arc_reaper_deletions_held_back_total"], "10m", /^increase\(arc_reaper_deletions_held_back_total\[10m\]\) > 0$/);
    has("ArcReaperPaused", ["arc_reaper_paused"], "1h", /^arc_reaper_paused == 1$/);
    has("ArcReaperAgentDisconnected", ["arc_reaper_agent_connected"], "5m", /^arc_reaper_agent_connected == 0$/);
    // Issue 22: a namespace the agent cannot read (its Role removed) holds its runners: named by cluster and namespace.
    has("ArcReaperAgentNamespaceUnreadable", ["arc_reaper_agent_namespace_readable"], "10m", /^arc_reaper_agent_namespace_readable == 0$/);
    expect(seconds(byName.get("ArcReaperPaused")!.for!)).toBe(3600);
    // And the two that catch what the six cannot see: no metrics at all, and a webhook secret that differs.
    expect(metricsOf(byName.get("ArcReaperMetricsMissing")!.expr)).toEqual(["arc_reaper_last_sweep_timestamp_seconds"]);
    expect(byName.get("ArcReaperWebhookDeliveriesRejected")!.expr).toContain('outcome="rejected"');
    // Issue 18: a deletion ARC holds past REAPER_STUCK_SECONDS; the gauge already waited that long, so no `for`.
    has("ArcReaperStuckDeletions", ["arc_reaper_stuck_deletions"], undefined, /^arc_reaper_stuck_deletions > 0$/);
    // Issue 24: Failed runners holding slots of a scale set for 15 minutes.
    has("ArcReaperFailedRunners", ["arc_reaper_failed_runners"], "15m", /^sum by \(cluster, namespace, scale_set\) \(arc_reaper_failed_runners\) > 0$/);
    // Runners that never work (idle past REAPER_IDLE_ALERT_SECONDS, or a parked Outdated scale set), by scale set and version.
    has(
      "ArcReaperRunnersNeverWork",
      ["arc_reaper_idle_runners"],
      "30m",
      /^sum by \(cluster, namespace, scale_set, runner_version, why\) \(arc_reaper_idle_runners\) > 0$/,
    );
    expect(alerts).toHaveLength(12);
  });
});

// ---- The dashboard.

const dashboard = object(JSON.parse(read("rules/dashboard.json")) as unknown, "dashboard.json");
// biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's own variable syntax, not a template literal.
const DATASOURCE = { type: "prometheus", uid: "${datasource}" };

function dashboardExprs(d: Json): { where: string; expr: string }[] {
  const out: { where: string; expr: string }[] = [];
  const panels = array(d["panels"], "panels");
  const ids = new Set<unknown>();
  for (const [i, p] of panels.entries()) {
    const panel = object(p, `panel ${i}`);
    const where = `panel ${JSON.stringify(panel["title"])}`;
    if (typeof panel["title"] !== "string" || panel["title"] === "") throw new Error(`panel ${i} has no title`);
    if (!Number.isInteger(panel["id"]) || ids.has(panel["id"])) throw new Error(`${where}: id missing or repeated`);
    ids.add(panel["id"]);
    if (!["stat", "timeseries"].includes(String(panel["type"]))) throw new Error(`${where}: type ${String(panel["type"])}`);
    expect(panel["datasource"], where).toEqual(DATASOURCE);
    const grid = object(panel["gridPos"], `${where} gridPos`);
    const [x, y, w, h] = [grid["x"], grid["y"], grid["w"], grid["h"]].map(Number) as [number, number, number, number];
    if (![x, y, w, h].every(Number.isInteger) || x < 0 || y < 0 || w < 1 || h < 1 || x + w > 24) throw new Error(`${where}: gridPos outside the 24 columns`);
    const refIds = new Set<unknown>();
    for (const t of array(panel["targets"], `${where} targets`)) {
      const target = object(t, `${where} target`);
      if (typeof target["expr"] !== "string" || typeof target["refId"] !== "string" || refIds.has(target["refId"]))
        throw new Error(`${where}: a target without expr or with a repeated refId`);
      refIds.add(target["refId"]);
      expect(target["datasource"], where).toEqual(DATASOURCE);
      out.push({ where, expr: target["expr"] });
    }
    if (refIds.size === 0) throw new Error(`${where}: no query`);
  }
  for (const v of array(object(d["templating"], "templating")["list"], "templating.list")) {
    const variable = object(v, "a variable");
    if (variable["type"] === "datasource") expect(variable["query"]).toBe("prometheus");
    else if (variable["type"] === "query") {
      const q = String(object(variable["query"], `variable ${String(variable["name"])}`)["query"]);
      const m = /^label_values\((.+), (\w+)\)$/.exec(q);
      if (!m) throw new Error(`variable ${String(variable["name"])}: not label_values(selector, label)`);
      out.push({ where: `variable ${String(variable["name"])}`, expr: `absent(${m[1]!})` }); // a selector, checked as an argument
    } else throw new Error(`variable ${String(variable["name"])} of type ${String(variable["type"])}`);
  }
  return out;
}

describe("infra/monitoring/rules/dashboard.json", () => {
  it("is a Grafana dashboard with a stable uid, a Prometheus data source variable and a job variable", () => {
    expect(dashboard).toMatchObject({ uid: "arc-reaper", title: "arc-reaper", schemaVersion: expect.any(Number) });
    const names = array(object(dashboard["templating"], "templating")["list"], "list").map((v) => object(v, "variable")["name"]);
    expect(names).toEqual(["datasource", "job"]);
  });

  const exprs = dashboardExprs(dashboard);

  it.each(exprs.map((e) => [e.where, e.expr] as const))("%s: %s parses and uses only metrics /metrics exposes", (_, expr) => {
    expect(contractProblems(expr)).toEqual([]);
    if (!expr.startsWith("absent(")) expect(expr).toContain('job=~"$job"');
  });

  it("shows every metric family /metrics exposes", () => {
    expect(new Set(exprs.flatMap((e) => metricsOf(e.expr)))).toEqual(new Set(METRIC_NAMES));
  });

  it("is refused with a panel that names a metric /metrics does not expose", () => {
    const broken = structuredClone(dashboard);
    const target = object(array(object(array(broken["panels"], "panels")[0], "panel")["targets"], "targets")[0], "target");
    target["expr"] = 'max(arc_reaper_last_sweep_timestamp{job=~"$job"})';
    expect(dashboardExprs(broken).flatMap((e) => contractProblems(e.expr))).toEqual(["arc_reaper_last_sweep_timestamp is not in METRIC_NAMES"]);
  });
});

// ---- The scrape and the kustomization.

describe("infra/monitoring/scrape-config.yaml", () => {
  const scrape = object(parseYaml(read("scrape-config.yaml")) as unknown, "scrape-config.yaml");

  it("loads as a ScrapeConfig of the Worker's /metrics over HTTPS with a bearer token from a Secret", () => {
    expect(() => new ScrapeConfig(scrape as unknown as ConstructorParameters<typeof ScrapeConfig>[0]).validate()).not.toThrow();
    expect(scrape).toMatchObject({
      apiVersion: "monitoring.coreos.com/v1alpha1",
      kind: "ScrapeConfig",
      spec: {
        scheme: "HTTPS",
        metricsPath: "/metrics",
        authorization: { type: "Bearer", credentials: { name: "arc-reaper-metrics-token", key: "token" } },
      },
    });
  });

  it("points at a placeholder host that can never resolve until it is replaced", () => {
    const spec = object(scrape["spec"], "spec");
    const targets = array(spec["staticConfigs"], "staticConfigs").flatMap((c) => array(object(c, "static config")["targets"], "targets"));
    expect(targets).toEqual(["arc-reaper.example.invalid"]);
  });
});

describe("infra/monitoring's kustomizations", () => {
  const k = object(parseYaml(read("kustomization.yaml")) as unknown, "kustomization.yaml");
  const rules = object(parseYaml(read("rules/kustomization.yaml")) as unknown, "rules/kustomization.yaml");

  it("on Cloudflare: the rules and the dashboard, and the scrape of the Worker's public /metrics", () => {
    expect(k).toMatchObject({ apiVersion: "kustomize.config.k8s.io/v1beta1", kind: "Kustomization", namespace: "monitoring" });
    expect(k["resources"]).toEqual(["rules", "scrape-config.yaml"]);
    expect(rules["resources"]).toEqual(["prometheus-rule.yaml"]);
    expect(rules["configMapGenerator"]).toEqual([
      {
        name: "arc-reaper-dashboard",
        files: ["dashboard.json"],
        options: { disableNameSuffixHash: true, labels: expect.objectContaining({ grafana_dashboard: "1" }) },
      },
    ]);
    expect(() => read("rules/dashboard.json")).not.toThrow();
  });

  it.skipIf(!hasKubectl)("in the cluster: the same rules and dashboard, a PodMonitor of the server's pod, and alert texts for this home", () => {
    const objects = kustomize(join(DIR, "cluster"));
    const cloudflare = kustomize(DIR);
    expect(objects.map((o) => `${o.kind}/${o.metadata.namespace}/${o.metadata.name}`).sort()).toEqual(
      ["ConfigMap/monitoring/arc-reaper-dashboard", "PodMonitor/arc-reaper/arc-reaper", "PrometheusRule/monitoring/arc-reaper"].sort(),
    );
    const monitor = objects.find((o) => o.kind === "PodMonitor") as unknown as ConstructorParameters<typeof PodMonitor>[0] & Json;
    expect(() => new PodMonitor(monitor).validate()).not.toThrow();
    // The server's pod, its named port, and a token Prometheus may hold (not the admin's).
    const server = renderKustomization(join(ROOT, "infra/server/base"));
    const pod = server.find((o) => o.kind === "Deployment") as unknown as {
      spec: { template: { metadata: { labels: Json }; spec: { containers: Array<{ ports: Array<{ name: string }> }> } } };
    };
    expect(monitor.spec?.selector?.matchLabels).toEqual(pod.spec.template.metadata.labels);
    expect(monitor.spec?.podMetricsEndpoints).toEqual([
      expect.objectContaining({
        port: pod.spec.template.spec.containers[0]!.ports[0]!.name,
        path: "/metrics",
        authorization: { type: "Bearer", credentials: { name: "arc-reaper-secrets", key: "METRICS_TOKEN" } },
      }),
    ]);
    // Prometheus's namespace may reach the pod's port.
    const np = server.find((o) => o.kind === "NetworkPolicy") as unknown as {
      spec: { ingress: Array<{ from: Array<{ namespaceSelector: { matchLabels: Json } }>; ports: Array<{ port: number }> }> };
    };
    expect(np.spec.ingress).toContainEqual({
      from: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } } }],
      ports: [{ protocol: "TCP", port: 8080 }],
    });
    // The same alerts, expressions and thresholds; the texts that name a home's tools name this home's.
    const alerts = (o: KubeObject[]) =>
      (
        object(
          o.find((x) => x.kind === "PrometheusRule"),
          "rule",
        ) as Any
      ).spec.groups[0].rules as Array<Any>;
    expect(alerts(objects).map((r) => [r.alert, r.expr, r.for])).toEqual(alerts(cloudflare).map((r) => [r.alert, r.expr, r.for]));
    const texts = (o: KubeObject[]) => alerts(o).map((r) => `${r.alert}: ${r.annotations.description}`);
    for (const t of texts(objects)) expect(t).not.toMatch(/wrangler|cron trigger|Triggers tab|the Worker/i);
    expect(texts(objects).find((t) => t.startsWith("ArcReaperNoSweep:"))).toMatch(/kubectl -n arc-reaper logs deploy\/arc-reaper/);
    expect(texts(cloudflare).find((t) => t.startsWith("ArcReaperNoSweep:"))).toMatch(/cron trigger/);
  });
});
