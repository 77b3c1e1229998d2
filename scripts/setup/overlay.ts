// One kustomize overlay of infra/agent per cluster, in the state dir: the base
// with this cluster's image, Worker URL, name and namespaces, and a Role per
// runner namespace. No secret in it: the token Secret is made apart, on purpose
// (as in infra/agent, `kubectl apply -k` never writes over a real token).
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { stringify } from "yaml";

export function agentOverlayDir(stateDir: string, cluster: string): string {
  return join(stateDir, `agent-${cluster}`);
}

export function writeAgentOverlay(o: { root: string; stateDir: string; cluster: string; namespaces: string[]; workerUrl: string; image: string }): string {
  const dir = agentOverlayDir(o.stateDir, o.cluster);
  // The overlay is setup's own: written whole each time, so a changed answer leaves no stale namespace behind.
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const infra = (from: string, to: string) => relative(from, join(o.root, "infra/agent", to));
  const patch = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "arc-reaper-agent", namespace: "arc-reaper-agent" },
    spec: {
      template: {
        spec: {
          containers: [
            {
              name: "agent",
              image: o.image,
              env: [
                { name: "ARC_REAPER_URL", value: o.workerUrl },
                { name: "AGENT_CLUSTER", value: o.cluster },
                { name: "REAPER_NAMESPACES", value: o.namespaces.join(",") },
              ],
            },
          ],
        },
      },
    },
  };
  const kustomization = {
    apiVersion: "kustomize.config.k8s.io/v1beta1",
    kind: "Kustomization",
    // cluster-identity: get on the kube-system namespace object, whose uid the agent's hello carries.
    resources: [infra(dir, "base"), infra(dir, "cluster-identity"), ...o.namespaces.map((ns) => `namespaces/${ns}`)],
    patches: [{ patch: stringify(patch) }],
  };
  const header = `# Made by npm run setup for cluster ${o.cluster}: infra/agent with this cluster's settings.\n# No secret here: Secret arc-reaper-agent-token is made apart. Apply: kubectl apply -k ${relative(process.cwd(), dir) || "."}\n`;
  writeFileSync(join(dir, "kustomization.yaml"), header + stringify(kustomization));
  for (const ns of o.namespaces) {
    const nsDir = join(dir, "namespaces", ns);
    mkdirSync(nsDir, { recursive: true });
    writeFileSync(
      join(nsDir, "kustomization.yaml"),
      stringify({ apiVersion: "kustomize.config.k8s.io/v1beta1", kind: "Kustomization", namespace: ns, resources: [infra(nsDir, "runner-namespace")] }),
    );
  }
  return dir;
}

/** The agent's namespace and token Secret as one YAML stream for `kubectl apply -f -` (stdin only). */
export function agentSecretYaml(token: string): string {
  const ns = {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: "arc-reaper-agent", labels: { "app.kubernetes.io/name": "arc-reaper-agent", "pod-security.kubernetes.io/enforce": "restricted" } },
  };
  const secret = {
    apiVersion: "v1",
    kind: "Secret",
    type: "Opaque",
    metadata: {
      name: "arc-reaper-agent-token",
      namespace: "arc-reaper-agent",
      labels: { "app.kubernetes.io/name": "arc-reaper-agent", "app.kubernetes.io/managed-by": "arc-reaper-setup" },
    },
    data: { AGENT_TOKEN: Buffer.from(token).toString("base64") },
  };
  return `${stringify(ns)}---\n${stringify(secret)}`;
}
