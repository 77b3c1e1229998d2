// Step 4 (direct mode): infra/kubernetes for the runner namespaces, then the
// ServiceAccount's token read with kubectl and stored as KUBE_TOKEN (stdin to
// stdin, never a file); without a kubectl context, the commands to run.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { stringify } from "yaml";
import type { StepContext } from "./context.ts";
import { applyKustomize, contextFor } from "./kubectl.ts";
import { run } from "./run.ts";
import { storeSecrets } from "./secrets-step.ts";

function writeDirectOverlay(c: StepContext): string {
  const dir = join(c.a.stateDir, "direct");
  rmSync(dir, { recursive: true, force: true });
  const infra = (from: string, to: string) => relative(from, join(c.root, "infra/kubernetes", to));
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "kustomization.yaml"), stringify({ apiVersion: "kustomize.config.k8s.io/v1beta1", kind: "Kustomization", resources: [infra(dir, "reaper"), ...c.a.namespaces.map((ns) => `namespaces/${ns}`)] }));
  for (const ns of c.a.namespaces) {
    const nsDir = join(dir, "namespaces", ns);
    mkdirSync(nsDir, { recursive: true });
    writeFileSync(join(nsDir, "kustomization.yaml"), stringify({ apiVersion: "kustomize.config.k8s.io/v1beta1", kind: "Kustomization", namespace: ns, resources: [infra(nsDir, "runner-namespace")] }));
  }
  return dir;
}

async function readToken(root: string, context: string): Promise<string | undefined> {
  for (let i = 0; i < 10; i++) {
    const r = await run("kubectl", ["--context", context, "-n", "arc-reaper", "get", "secret", "arc-reaper-token", "-o", "jsonpath={.data.token}"], { cwd: root });
    if (r.code === 0 && r.out.trim() !== "") return Buffer.from(r.out.trim(), "base64").toString("utf8");
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  return undefined;
}

export async function directClusterStep(c: StepContext): Promise<void> {
  c.say.step("4. The cluster (direct mode)");
  const cluster = c.a.clusters[0] ?? "default";
  const dir = writeDirectOverlay(c);
  const shown = relative(process.cwd(), dir) || dir;
  const st = (c.state.clusters[cluster] ??= { overlay: dir });
  if (st.applied && c.state.secretsBySetup.includes("KUBE_TOKEN")) {
    c.say.done(`the ServiceAccount and Roles were applied and KUBE_TOKEN stored by an earlier run: kept`);
    return;
  }
  const context = await contextFor(c.root, cluster, true);
  const agree = context !== undefined && (c.a.apply || (c.ask !== undefined && (await c.ask.confirm({ message: `Apply infra/kubernetes for ${c.a.namespaces.join(", ")} with kubectl context ${context}?`, initial: true }))));
  if (context !== undefined && agree) {
    await applyKustomize({ root: c.root, context }, dir);
    st.applied = true;
    c.save();
    const token = await readToken(c.root, context);
    if (token === undefined) {
      c.say.warn("the token controller has not filled Secret arc-reaper/arc-reaper-token yet: run setup again in a moment");
      return;
    }
    await storeSecrets(c, { KUBE_TOKEN: token });
    c.say.done(`applied ${shown} with context ${context} and stored the ServiceAccount's token as KUBE_TOKEN`);
    return;
  }
  c.say.info(`overlay written to ${shown}; run these where kubectl reaches the cluster (the token goes from kubectl to wrangler through a pipe):`);
  c.say.info(`  kubectl apply -k ${shown}`);
  c.say.info(`  kubectl -n arc-reaper get secret arc-reaper-token -o jsonpath='{.data.token}' | base64 -d | npx wrangler secret put KUBE_TOKEN -c ${relative(process.cwd(), c.wrangler.config)}`);
}
