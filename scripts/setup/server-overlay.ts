// The in-cluster server's overlay, rendered by `npm run setup -- --target cluster`
// into the state dir: infra/server's base in the user's namespace, with their
// image, App id and runner namespaces, an Ingress for POST /webhook on their
// host, and per runner namespace the Worker's own Role bound to the server's
// ServiceAccount. No secret is in any of it (the Secret goes through kubectl's stdin).
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { readRelease } from "../lib/release.ts";

export interface ServerOverlay {
  namespace: string;
  host: string;
  image: string;
  appId: number;
  runnerNamespaces: string[];
  githubApiUrl: string;
}

const PLACEHOLDER_HOST = "arc-reaper.example.invalid";
const json = (v: unknown) => JSON.stringify(v, null, 2);

/** Writes the overlay under `dir` (replacing what an earlier run wrote there); answers the directory to `kubectl apply -k`. */
export function writeServerOverlay(root: string, dir: string, o: ServerOverlay): string {
  rmSync(dir, { recursive: true, force: true });
  const app = join(dir, "app");
  mkdirSync(app, { recursive: true });
  const rel = (from: string, to: string) => relative(from, join(root, to));
  const at = o.image.lastIndexOf(":");
  const [newName, newTag] = at > o.image.lastIndexOf("/") ? [o.image.slice(0, at), o.image.slice(at + 1)] : [o.image, "latest"];
  const baseImage = readRelease(root).serverImage.replace(/:[^:/]+$/, "");
  const header = "# Made by npm run setup -- --target cluster: no secrets in here. Apply with kubectl apply -k on the directory above.\n";
  writeFileSync(
    join(app, "kustomization.yaml"),
    header +
      json({
        apiVersion: "kustomize.config.k8s.io/v1beta1",
        kind: "Kustomization",
        namespace: o.namespace,
        resources: [rel(app, "infra/server/base"), "ingress.yaml"],
        images: [{ name: baseImage, newName, newTag }],
        // Merged into the base's generated settings: the ConfigMap's hash, and so the pod, follows them.
        configMapGenerator: [
          {
            name: "arc-reaper-settings",
            behavior: "merge",
            literals: [`GITHUB_APP_ID=${o.appId}`, `REAPER_NAMESPACES=${o.runnerNamespaces.join(",")}`, `GITHUB_API_URL=${o.githubApiUrl}`],
          },
        ],
        patches: [{ target: { kind: "Namespace", name: "arc-reaper" }, patch: json([{ op: "replace", path: "/metadata/name", value: o.namespace }]) }],
      }),
  );
  writeFileSync(join(app, "ingress.yaml"), readFileSync(join(root, "infra/server/examples/ingress.yaml"), "utf8").replaceAll(PLACEHOLDER_HOST, o.host));
  const runners = o.runnerNamespaces.map((ns) => `runners-${ns}`);
  for (const [i, ns] of o.runnerNamespaces.entries()) {
    const d = join(dir, runners[i]!);
    mkdirSync(d);
    writeFileSync(
      join(d, "kustomization.yaml"),
      header +
        json({
          apiVersion: "kustomize.config.k8s.io/v1beta1",
          kind: "Kustomization",
          namespace: ns,
          resources: [rel(d, "infra/kubernetes/runner-namespace")],
          patches: [
            { target: { kind: "RoleBinding", name: "arc-reaper" }, patch: json([{ op: "replace", path: "/subjects/0/namespace", value: o.namespace }]) },
          ],
        }),
    );
  }
  writeFileSync(
    join(dir, "kustomization.yaml"),
    header + json({ apiVersion: "kustomize.config.k8s.io/v1beta1", kind: "Kustomization", resources: ["app", ...runners] }),
  );
  return dir;
}

/** The Secret the server reads its secrets from, as YAML for `kubectl apply -f -` (stdin only). */
export function serverSecretYaml(namespace: string, values: Record<string, string>): string {
  return json({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "arc-reaper-secrets", namespace, labels: { "app.kubernetes.io/name": "arc-reaper", "app.kubernetes.io/managed-by": "arc-reaper-setup" } },
    type: "Opaque",
    stringData: values,
  });
}
