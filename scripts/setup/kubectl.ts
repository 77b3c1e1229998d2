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
