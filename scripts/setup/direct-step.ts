// Step 4 (direct mode): infra/kubernetes for the runner namespaces, then the
// ServiceAccount's token read with kubectl and stored as KUBE_TOKEN (stdin to
// stdin, never a file); without a kubectl context, the commands to run.
// A token Secret or a KUBE_TOKEN setup did not make is named and kept (unless --replace).
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { stringify } from "yaml";
import type { StepContext } from "./context.ts";
import { applyKustomize, contextFor, type Kubectl } from "./kubectl.ts";
import { run, tail } from "./run.ts";
import { storeSecrets } from "./secrets-step.ts";
import { secretNames } from "./wrangler.ts";

const TOKEN_SECRET = { apiVersion: "v1", kind: "Secret", metadata: { name: "arc-reaper-token", namespace: "arc-reaper" } };

/** `keepSecret`: leave Secret arc-reaper-token out (one setup did not make is there); else label it as setup's. */
function writeDirectOverlay(c: StepContext, keepSecret: boolean): string {
  const dir = join(c.a.stateDir, "direct");
  rmSync(dir, { recursive: true, force: true });
  const infra = (from: string, to: string) => relative(from, join(c.root, "infra/kubernetes", to));
  mkdirSync(dir, { recursive: true });
  const secretPatch = keepSecret
    ? { ...TOKEN_SECRET, $patch: "delete" }
    : { ...TOKEN_SECRET, metadata: { ...TOKEN_SECRET.metadata, labels: { "app.kubernetes.io/managed-by": "arc-reaper-setup" } } };
  writeFileSync(
    join(dir, "kustomization.yaml"),
    stringify({
      apiVersion: "kustomize.config.k8s.io/v1beta1",
      kind: "Kustomization",
      // cluster-identity: get on the kube-system namespace object, the cluster's identity (docs/design.md).
      resources: [infra(dir, "reaper"), infra(dir, "cluster-identity"), ...c.a.namespaces.map((ns) => `namespaces/${ns}`)],
      patches: [{ patch: stringify(secretPatch) }],
    }),
  );
  for (const ns of c.a.namespaces) {
    const nsDir = join(dir, "namespaces", ns);
    mkdirSync(nsDir, { recursive: true });
    writeFileSync(
      join(nsDir, "kustomization.yaml"),
      stringify({ apiVersion: "kustomize.config.k8s.io/v1beta1", kind: "Kustomization", namespace: ns, resources: [infra(nsDir, "runner-namespace")] }),
    );
  }
  return dir;
}

interface TokenSecret {
  owner: "none" | "setup" | "other";
  /** A ServiceAccount token Secret of ServiceAccount arc-reaper: its token is the one the Worker needs. */
  ofArcReaper: boolean;
}

async function tokenSecret(k: Kubectl): Promise<TokenSecret> {
  const r = await run(
    "kubectl",
    [
      "--context",
      k.context,
      "-n",
      "arc-reaper",
      "get",
      "secret",
      "arc-reaper-token",
      "-o",
      "jsonpath={.type} {.metadata.annotations.kubernetes\\.io/service-account\\.name} {.metadata.labels.app\\.kubernetes\\.io/managed-by}",
    ],
    { cwd: k.root },
  );
  if (r.code !== 0) {
    if (/NotFound|not found/i.test(r.out)) return { owner: "none", ofArcReaper: false };
    throw new Error(`kubectl get secret arc-reaper-token failed:\n${tail(r.out)}`);
  }
  const [type, account, managedBy] = r.out.trim().split(" ");
  return {
    owner: managedBy === "arc-reaper-setup" ? "setup" : "other",
    ofArcReaper: type === "kubernetes.io/service-account-token" && account === "arc-reaper",
  };
}

async function readToken(root: string, context: string): Promise<string | undefined> {
  for (let i = 0; i < 10; i++) {
    const r = await run("kubectl", ["--context", context, "-n", "arc-reaper", "get", "secret", "arc-reaper-token", "-o", "jsonpath={.data.token}"], {
      cwd: root,
    });
    if (r.code === 0 && r.out.trim() !== "") return Buffer.from(r.out.trim(), "base64").toString("utf8");
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  return undefined;
}

export async function directClusterStep(c: StepContext): Promise<void> {
  c.say.step("4. The cluster (direct mode)");
  const cluster = c.a.clusters[0] ?? "default";
  c.state.clusters[cluster] ??= { overlay: join(c.a.stateDir, "direct") };
  const st = c.state.clusters[cluster];
  if (st.applied && (c.state.secretsBySetup.includes("KUBE_TOKEN") || c.state.secretsKept.includes("KUBE_TOKEN"))) {
    writeDirectOverlay(c, st.secret === "kept");
    c.say.done(
      `the ServiceAccount and Roles were applied and KUBE_TOKEN ${c.state.secretsKept.includes("KUBE_TOKEN") ? "kept" : "stored"} by an earlier run: kept`,
    );
    return;
  }
  const context = await contextFor(c.root, cluster, true);
  const agree =
    context !== undefined &&
    (c.a.apply ||
      (c.ask !== undefined &&
        (await c.ask.confirm({ message: `Apply infra/kubernetes for ${c.a.namespaces.join(", ")} with kubectl context ${context}?`, initial: true }))));
  if (context === undefined || !agree) {
    const dir = writeDirectOverlay(c, false);
    const shown = relative(process.cwd(), dir) || dir;
    c.say.info(`overlay written to ${shown}; run these where kubectl reaches the cluster (the token goes from kubectl to wrangler through a pipe):`);
    c.say.info(`  kubectl apply -k ${shown}`);
    c.say.info(
      `  kubectl -n arc-reaper get secret arc-reaper-token -o jsonpath='{.data.token}' | base64 -d | npx wrangler secret put KUBE_TOKEN --env ${c.wrangler.env} -c ${relative(process.cwd(), c.wrangler.config)}`,
    );
    return;
  }
  const k = { root: c.root, context };
  const existing = await tokenSecret(k);
  const keep = existing.owner === "other" && !c.a.replace;
  const dir = writeDirectOverlay(c, keep);
  const shown = relative(process.cwd(), dir) || dir;
  st.overlay = dir;
  await applyKustomize(k, dir);
  st.applied = true;
  st.secret = keep ? "kept" : "created";
  c.save();
  if (keep) {
    c.say.warn(`Secret arc-reaper/arc-reaper-token was there before setup: kept, not applied over (--replace to let setup replace it)`);
    if (!existing.ofArcReaper) {
      c.say.warn(
        "it is not a ServiceAccount token of ServiceAccount arc-reaper, so KUBE_TOKEN was not stored: fix or remove that Secret (or add --replace), then run setup again",
      );
      return;
    }
  }
  const token = await readToken(c.root, context);
  if (token === undefined) {
    c.say.warn("the token controller has not filled Secret arc-reaper/arc-reaper-token yet: run setup again in a moment");
    return;
  }
  const present = (await secretNames(c.wrangler)) ?? [];
  if (present.includes("KUBE_TOKEN") && !c.state.secretsBySetup.includes("KUBE_TOKEN") && !c.a.replace) {
    if (!c.state.secretsKept.includes("KUBE_TOKEN")) c.state.secretsKept.push("KUBE_TOKEN");
    c.save();
    c.say.warn(
      `KUBE_TOKEN was already set on the Worker, not by setup: kept (--replace to store the token of ${keep ? "the kept Secret" : "the Secret setup applied"})`,
    );
    return;
  }
  await storeSecrets(c, { KUBE_TOKEN: token });
  c.say.done(
    `applied ${shown} with context ${context} and stored ${keep ? "the kept Secret's" : "the ServiceAccount's"} token as KUBE_TOKEN (through stdin; not on disk, not on a command line)`,
  );
}
