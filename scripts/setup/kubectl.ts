// kubectl, when this machine has it and a context for the cluster. Manifests
// and the token Secret go through stdin (`apply -f -`), never a file or argv.
import { run, tail } from "./run.ts";

export interface Kubectl {
  root: string;
  context: string;
}

/** The context to use for `cluster`: the current one for a single cluster, else the context of that name. */
export async function contextFor(root: string, cluster: string, single: boolean): Promise<string | undefined> {
  if (single) {
    const r = await run("kubectl", ["config", "current-context"], { cwd: root });
    const name = r.out.trim();
    return r.code === 0 && name !== "" ? name : undefined;
  }
  const r = await run("kubectl", ["config", "get-contexts", "-o", "name"], { cwd: root });
  return r.code === 0 &&
    r.out
      .split("\n")
      .map((s) => s.trim())
      .includes(cluster)
    ? cluster
    : undefined;
}

/** Whether Secret arc-reaper-agent-token exists, and whether setup made it. */
export async function agentSecretOwner(k: Kubectl): Promise<"none" | "setup" | "other"> {
  const r = await run(
    "kubectl",
    [
      "--context",
      k.context,
      "-n",
      "arc-reaper-agent",
      "get",
      "secret",
      "arc-reaper-agent-token",
      "-o",
      "jsonpath={.metadata.labels.app\\.kubernetes\\.io/managed-by}",
    ],
    { cwd: k.root },
  );
  if (r.code !== 0) {
    if (/NotFound|not found/i.test(r.out)) return "none";
    throw new Error(`kubectl get secret failed:\n${tail(r.out)}`);
  }
  return r.out.trim() === "arc-reaper-setup" ? "setup" : "other";
}

export async function applyStdin(k: Kubectl, yaml: string): Promise<void> {
  const r = await run("kubectl", ["--context", k.context, "apply", "-f", "-"], { cwd: k.root, stdin: yaml });
  if (r.code !== 0) throw new Error(`kubectl apply -f - failed:\n${tail(r.out)}`);
}

export async function applyKustomize(k: Kubectl, dir: string): Promise<string> {
  const r = await run("kubectl", ["--context", k.context, "apply", "-k", dir], { cwd: k.root });
  if (r.code !== 0) throw new Error(`kubectl apply -k ${dir} failed:\n${tail(r.out)}`);
  return r.out.trim();
}

/**
 * Applies objects given on stdin server-side: the API server keeps field owners in
 * managedFields and writes no `last-applied-configuration` annotation, so a Secret's
 * values are stored once, in the Secret, and nowhere beside it.
 */
export async function applyServerSide(k: Kubectl, json: string): Promise<void> {
  const r = await run("kubectl", ["--context", k.context, "apply", "--server-side", "--field-manager=arc-reaper-setup", "--force-conflicts", "-f", "-"], {
    cwd: k.root,
    stdin: json,
  });
  if (r.code !== 0) throw new Error(`kubectl apply --server-side -f - failed:\n${tail(r.out)}`);
}

/** What `kubectl kustomize dir` renders (no cluster is asked). */
export async function kustomize(root: string, dir: string): Promise<string> {
  const r = await run("kubectl", ["kustomize", dir], { cwd: root });
  if (r.code !== 0) throw new Error(`kubectl kustomize ${dir} failed:\n${tail(r.out)}`);
  return r.out;
}

/** The API server address of a context, for the plan. */
export async function contextServer(k: Kubectl): Promise<string> {
  const r = await run("kubectl", ["config", "view", "--minify", "--context", k.context, "-o", "jsonpath={.clusters[0].cluster.server}"], { cwd: k.root });
  return r.code === 0 && r.out.trim() !== "" ? r.out.trim() : "(unknown: kubectl config view answered nothing)";
}

/** Waits until the Deployment's pod is ready (its readiness probe, /healthz, passes). */
export async function rolloutStatus(k: Kubectl, namespace: string, minutes: number): Promise<{ ok: boolean; out: string }> {
  const r = await run("kubectl", ["--context", k.context, "-n", namespace, "rollout", "status", "deploy/arc-reaper", `--timeout=${minutes}m`], { cwd: k.root });
  return { ok: r.code === 0, out: tail(r.out) };
}
