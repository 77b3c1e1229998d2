// What npm run setup writes: the deployment as an environment of the config a
// team commits (its name, the top level's bindings, setup's vars, nothing secret) and an
// agent overlay per cluster; the token Secret only as a stream for kubectl's stdin.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { parse } from "yaml";
import { afterAll, describe, expect, it } from "vitest";
import { fileURLToPath } from "node:url";
import { agentSecretYaml, writeAgentOverlay } from "../../../../scripts/setup/overlay.ts";
import { renderEnvironment, setupBlock, setupEnvironments } from "../../../../scripts/setup/wrangler-config.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../../../..");

const dir = mkdtempSync(join(tmpdir(), "arc-reaper-setup-unit-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the files setup writes", () => {
  it("writes [env.production] into wrangler.toml: the name, the bindings wrangler does not inherit, setup's vars; again replaced, not doubled", () => {
    const source = readFileSync(join(ROOT, "wrangler.toml"), "utf8");
    const vars = { REAPER_DRY_RUN: "true", CLUSTER_MODE: "agent", REAPER_NAMESPACES: "a,b" };
    const once = renderEnvironment(source, "production", "my-reaper", vars);
    expect(once.startsWith(source.trimEnd())).toBe(true);
    const block = setupBlock(once, "production") ?? "";
    expect(block).toMatch(/^\[env\.production\]\nname = "my-reaper"$/m);
    expect(block).toMatch(/^\[\[env\.production\.durable_objects\.bindings\]\]\nname = "LEDGER"\nclass_name = "Ledger"$/m);
    expect(block).toMatch(/^\[\[env\.production\.ratelimits\]\]\nname = "FRONT_DOOR"$/m);
    expect(block).not.toMatch(/migrations/);
    expect(block).toMatch(/^\[env\.production\.vars\]\nREAPER_DRY_RUN = "true"\nCLUSTER_MODE = "agent"\nREAPER_NAMESPACES = "a,b"$/m);
    // Defaults stay the code's: none of the top level's other vars is copied.
    expect(block).not.toMatch(/REAPER_GRACE_SECONDS/);
    const twice = renderEnvironment(once, "production", "my-reaper", { ...vars, REAPER_NAMESPACES: "c" });
    expect(twice.match(/^\[env\.production\]$/gm)).toHaveLength(1);
    expect(setupBlock(twice, "production")).toMatch(/^REAPER_NAMESPACES = "c"$/m);
    const staging = renderEnvironment(twice, "staging", "my-reaper-staging", vars);
    expect(setupEnvironments(staging)).toEqual([
      { env: "production", name: "my-reaper" },
      { env: "staging", name: "my-reaper-staging" },
    ]);
    expect(setupBlock(staging, "staging")).not.toMatch(/env\.production/);
  });

  it("is the block the by-hand guide shows (docs/deploy.md, step 4), vars apart", () => {
    const written = setupBlock(renderEnvironment(readFileSync(join(ROOT, "wrangler.toml"), "utf8"), "production", "arc-reaper", {}), "production") ?? "";
    const guide = setupBlock(readFileSync(join(ROOT, "docs/deploy.md"), "utf8"), "production") ?? "";
    const withoutVars = (b: string) => b.replace(/^\[env\.production\.vars\]\n(?:(?:#|[A-Z]).*\n)*/m, "[env.production.vars]\n");
    expect(guide).not.toBe("");
    expect(withoutVars(`${guide}\n`)).toBe(withoutVars(`${written}\n`));
  });

  it("writes an overlay with the cluster's settings and a Role per namespace, and no secret", () => {
    const overlay = writeAgentOverlay({
      root: ROOT,
      stateDir: dir,
      cluster: "eu-west",
      namespaces: ["ns-a", "ns-b"],
      workerUrl: "https://r.example.workers.dev",
      image: "ghcr.io/o/a:1",
    });
    const k = parse(readFileSync(join(overlay, "kustomization.yaml"), "utf8")) as { resources: string[]; patches: { patch: string }[] };
    expect(k.resources).toEqual([
      expect.stringMatching(/infra\/agent\/base$/),
      expect.stringMatching(/infra\/agent\/cluster-identity$/),
      "namespaces/ns-a",
      "namespaces/ns-b",
    ]);
    const patch = parse(k.patches[0]?.patch ?? "") as {
      spec: { template: { spec: { containers: { image: string; env: { name: string; value: string }[] }[] } } };
    };
    const container = patch.spec.template.spec.containers[0];
    expect(container?.image).toBe("ghcr.io/o/a:1");
    expect(Object.fromEntries((container?.env ?? []).map((e) => [e.name, e.value]))).toEqual({
      ARC_REAPER_URL: "https://r.example.workers.dev",
      AGENT_CLUSTER: "eu-west",
      REAPER_NAMESPACES: "ns-a,ns-b",
    });
    const ns = parse(readFileSync(join(overlay, "namespaces/ns-b/kustomization.yaml"), "utf8")) as { namespace: string; resources: string[] };
    expect(ns.namespace).toBe("ns-b");
    expect(ns.resources[0]).toMatch(/infra\/agent\/runner-namespace$/);
    expect(readFileSync(join(overlay, "kustomization.yaml"), "utf8")).not.toMatch(/kind: Secret/);
  });

  it("makes the agent's Secret, labelled as setup's, for stdin only", () => {
    const docs = agentSecretYaml("t0ken")
      .split("---\n")
      .map((d) => parse(d) as { kind: string; metadata: { labels?: Record<string, string> }; data?: Record<string, string> });
    expect(docs.map((d) => d.kind)).toEqual(["Namespace", "Secret"]);
    expect(docs[1]?.metadata.labels?.["app.kubernetes.io/managed-by"]).toBe("arc-reaper-setup");
    expect(Buffer.from(docs[1]?.data?.["AGENT_TOKEN"] ?? "", "base64").toString()).toBe("t0ken");
  });
});
