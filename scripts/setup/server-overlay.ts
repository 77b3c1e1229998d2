// The in-cluster server's overlay, written by `npm run setup -- --target cluster`
// where the user says (--out), ready to commit to their GitOps repository: the
// shape of infra/examples/server, its bases taken by URL at this release's tag,
// with their namespace, image, App id, runner namespaces and host. No secret is
// in any of it (the Secret goes through kubectl's stdin, server-side).
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { pointRemoteBasesAt } from "../lib/remote-bases.ts";
import { readRelease } from "../lib/release.ts";

export interface ServerOverlay {
  namespace: string;
  host: string;
  image: string;
  /** The App's id, or undefined before the manifest flow made it (a dry run). */
  appId: number | undefined;
  runnerNamespaces: string[];
  githubApiUrl: string;
}

const PLACEHOLDER_HOST = "arc-reaper.example.invalid";
const HEADER = "# Made by npm run setup -- --target cluster: no secrets in here. Commit it; apply it with kubectl apply -k on the directory above.\n";

const yaml = (v: unknown) => HEADER + stringify(v, { lineWidth: 0 });

/** The image split as kustomize's `images:` wants it: name and tag. */
function imageParts(image: string): { newName: string; newTag: string } {
  const at = image.lastIndexOf(":");
  return at > image.lastIndexOf("/") ? { newName: image.slice(0, at), newTag: image.slice(at + 1) } : { newName: image, newTag: "latest" };
}

/** Writes the overlay under `dir` (replacing what an earlier run wrote there); answers the directory to apply. */
export function writeServerOverlay(root: string, dir: string, o: ServerOverlay): string {
  const release = readRelease(root);
  const base = (path: string) => `https://github.com/${release.repository}//${path}?ref=v${release.version}`;
  rmSync(dir, { recursive: true, force: true });
  const server = join(dir, "server");
  mkdirSync(server, { recursive: true });
  writeFileSync(
    join(server, "kustomization.yaml"),
    yaml({
      apiVersion: "kustomize.config.k8s.io/v1beta1",
      kind: "Kustomization",
      namespace: o.namespace,
      resources: [base("infra/server/base"), "ingress.yaml"],
      images: [{ name: release.serverImage.replace(/:[^:/]+$/, ""), ...imageParts(o.image) }],
      // Merged into the base's generated settings: the ConfigMap's hash, and so the pod, follows them.
      configMapGenerator: [
        {
          name: "arc-reaper-settings",
          behavior: "merge",
          literals: [
            `GITHUB_APP_ID=${o.appId ?? "made-by-the-manifest-flow"}`,
            `REAPER_NAMESPACES=${o.runnerNamespaces.join(",")}`,
            `GITHUB_API_URL=${o.githubApiUrl}`,
          ],
        },
      ],
    }),
  );
  writeFileSync(
    join(server, "ingress.yaml"),
    readFileSync(join(root, "infra/examples/server/server/ingress.yaml"), "utf8").replaceAll(PLACEHOLDER_HOST, o.host),
  );
  const runners = o.runnerNamespaces.map((ns) => `runners-${ns}`);
  for (const [i, ns] of o.runnerNamespaces.entries()) {
    const d = join(dir, runners[i]!);
    mkdirSync(d);
    writeFileSync(
      join(d, "kustomization.yaml"),
      yaml({
        apiVersion: "kustomize.config.k8s.io/v1beta1",
        kind: "Kustomization",
        namespace: ns,
        resources: [base("infra/kubernetes/runner-namespace")],
        patches: [
          {
            target: { kind: "RoleBinding", name: "arc-reaper" },
            patch: stringify([{ op: "replace", path: "/subjects/0/namespace", value: o.namespace }]),
          },
        ],
      }),
    );
  }
  // Get on the kube-system namespace object (the cluster's identity), bound to the server's ServiceAccount wherever it lives.
  mkdirSync(join(dir, "cluster-identity"));
  writeFileSync(
    join(dir, "cluster-identity", "kustomization.yaml"),
    yaml({
      apiVersion: "kustomize.config.k8s.io/v1beta1",
      kind: "Kustomization",
      resources: [base("infra/kubernetes/cluster-identity")],
      patches: [
        {
          target: { kind: "RoleBinding", name: "arc-reaper-cluster-identity" },
          patch: stringify([{ op: "replace", path: "/subjects/0/namespace", value: o.namespace }]),
        },
      ],
    }),
  );
  writeFileSync(
    join(dir, "kustomization.yaml"),
    yaml({ apiVersion: "kustomize.config.k8s.io/v1beta1", kind: "Kustomization", resources: ["server", "cluster-identity", ...runners] }),
  );
  return dir;
}

/**
 * A copy of the overlay in a scratch directory whose bases are this checkout's files at the same paths (setup
 * runs from a clone of the release it names), so rendering needs no network. The caller removes it with `done()`.
 */
export function localOverlayCopy(root: string, dir: string): { dir: string; done(): void } {
  const scratch = mkdtempSync(join(tmpdir(), "arc-reaper-setup-overlay-"));
  const copy = join(scratch, "overlay");
  cpSync(dir, copy, { recursive: true });
  pointRemoteBasesAt(copy, root);
  return { dir: copy, done: () => rmSync(scratch, { recursive: true, force: true }) };
}

/** The Secret the server reads its secrets from, as JSON for `kubectl apply --server-side -f -` (stdin only). */
export function serverSecretYaml(namespace: string, values: Record<string, string>): string {
  return JSON.stringify(
    {
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: "arc-reaper-secrets",
        namespace,
        labels: { "app.kubernetes.io/name": "arc-reaper", "app.kubernetes.io/managed-by": "arc-reaper-setup" },
      },
      type: "Opaque",
      stringData: values,
    },
    null,
    2,
  );
}
