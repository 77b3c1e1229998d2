// infra/examples/server: a user's own overlay of the in-cluster server, consuming
// the base by URL at a release tag, rendered by `kubectl kustomize` exactly as
// written except that the URLs point at this checkout (kubectl is offline here).
// The result must carry the user's namespace, image, App id and runner
// namespaces, settings under a hashed name the pod follows, no Secret, and
// pass the same schema checks as infra/server itself.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { readSettings } from "../../../src/config/settings.ts";
import { readRelease } from "../../../scripts/lib/release.ts";
import { ROOT } from "../../../scripts/server/build.ts";
import { listYamlFiles, objectId, renderKustomization, type KubeObject } from "../infra/infra-rbac.ts";
import { localOverlayCopy, type RemoteBase } from "../infra/user-overlay.ts";
import { validateKubeObject } from "../infra/kube-validate.ts";
import { hasKubectl, kustomize } from "../infra/kubectl.ts";

const EXAMPLE = join(ROOT, "infra/examples/server");
const release = readRelease(ROOT);
const work = mkdtempSync(join(tmpdir(), "arc-reaper-server-overlay-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The example copied to `name` under the scratch directory, its remote bases pointed at this checkout; every remote it names, returned. */
function localCopy(name: string): { dir: string; remotes: RemoteBase[] } {
  const dir = join(work, name);
  return { dir, remotes: localOverlayCopy(EXAMPLE, dir, ROOT) };
}

// biome-ignore lint/suspicious/noExplicitAny: a rendered manifest is walked by its known fields.
type Any = any;
const byKind = (objects: KubeObject[], kind: string): Any[] => objects.filter((o) => o.kind === kind);

describe.skipIf(!hasKubectl)("a user's overlay of the server (infra/examples/server)", () => {
  const { dir, remotes } = localCopy("overlay");
  const objects = kustomize(dir);
  const [deployment] = byKind(objects, "Deployment");
  const container = deployment.spec.template.spec.containers[0];
  const [settingsMap] = byKind(objects, "ConfigMap");

  it("takes arc-reaper's bases by URL at this release's tag, never a path into a checkout", () => {
    expect(remotes.length).toBe(3);
    for (const r of remotes) {
      expect(r.repository).toBe(release.repository);
      expect(r.ref).toBe(`v${release.version}`);
      expect(["infra/server/base", "infra/kubernetes/runner-namespace"]).toContain(r.path);
    }
    for (const file of listYamlFiles(EXAMPLE)) expect(readFileSync(file, "utf8"), file).not.toMatch(/resources:[\s\S]*- \.\.\//);
  });

  it("renders valid objects in the user's namespace: the server with the user's image, App id and runner namespaces", () => {
    for (const o of objects) validateKubeObject(o);
    expect(byKind(objects, "Namespace").map((n) => n.metadata.name)).toEqual(["ci-reaper"]);
    for (const o of objects.filter((x) => !["Namespace", "Role", "RoleBinding"].includes(x.kind))) expect(o.metadata.namespace, objectId(o)).toBe("ci-reaper");
    expect(container.image).toBe(`registry.example.invalid/mirror/arc-reaper-server:${release.version}`);
    const secrets = {
      GITHUB_WEBHOOK_SECRET: "x".repeat(32),
      GITHUB_APP_PRIVATE_KEY: "-----BEGIN RSA PRIVATE KEY-----\nMII\n-----END RSA PRIVATE KEY-----",
      ADMIN_TOKEN: "a".repeat(32),
    };
    const result = readSettings({ ...settingsMap.data, ...secrets, ARC_REAPER_HOME: "cluster" });
    expect(result).toMatchObject({ ok: true, settings: { dryRun: true, namespaces: ["team-a-runners", "team-b-runners"] } });
    expect(settingsMap.data.GITHUB_APP_ID).toBe("123456");
    // The base's other settings stay (merged, not replaced).
    expect(settingsMap.data.KUBE_TOKEN).toBe("service-account-token-file");
    expect(objects.filter((o) => o.kind === "Secret")).toEqual([]);
  });

  it("names the settings by a hash the pod follows, so a committed change rolls the pod", () => {
    expect(settingsMap.metadata.name).toMatch(/^arc-reaper-settings-[a-z0-9]{10}$/);
    expect(container.envFrom[0]).toEqual({ configMapRef: { name: settingsMap.metadata.name } });
    const changed = localCopy("changed").dir;
    const k = join(changed, "server/kustomization.yaml");
    writeFileSync(k, readFileSync(k, "utf8").replace("REAPER_DRY_RUN=true", "REAPER_DRY_RUN=false"));
    const after = kustomize(changed);
    const [map] = byKind(after, "ConfigMap");
    expect(map.data.REAPER_DRY_RUN).toBe("false");
    expect(map.metadata.name).not.toBe(settingsMap.metadata.name);
    expect(byKind(after, "Deployment")[0].spec.template.spec.containers[0].envFrom[0]).toEqual({ configMapRef: { name: map.metadata.name } });
  });

  it("grants the server its Role in exactly the runner namespaces it watches, bound to its ServiceAccount in the user's namespace", () => {
    const bindings = byKind(objects, "RoleBinding");
    expect(bindings.map((b) => b.metadata.namespace).sort()).toEqual(["team-a-runners", "team-b-runners"]);
    for (const b of bindings)
      expect(b.subjects).toEqual([{ kind: "ServiceAccount", name: deployment.spec.template.spec.serviceAccountName, namespace: "ci-reaper" }]);
    // Otherwise the same objects as infra/server's base.
    const base = renderKustomization(join(ROOT, "infra/server/base"), { namespace: "ci-reaper" }).map(
      (o) => `${o.kind}/${o.metadata.name.replace(/-[a-z0-9]{10}$/, "")}`,
    );
    const ours = objects
      .filter((o) => !["Role", "RoleBinding", "Ingress"].includes(o.kind))
      .map((o) => `${o.kind}/${o.metadata.name.replace(/-[a-z0-9]{10}$/, "")}`);
    expect(ours.sort()).toEqual(base.sort());
    expect(byKind(objects, "Ingress")[0].spec.rules[0].http.paths.map((p: Any) => p.path)).toEqual(["/webhook"]);
  });

  it("the External Secrets example makes the Secret the Deployment reads, with the keys the server needs", () => {
    const es = parseYaml(readFileSync(join(EXAMPLE, "server/external-secret.yaml"), "utf8")) as Any;
    expect(es).toMatchObject({ apiVersion: "external-secrets.io/v1", kind: "ExternalSecret", spec: { target: { name: "arc-reaper-secrets" } } });
    expect(container.envFrom[1]).toEqual({ secretRef: { name: es.spec.target.name } });
    expect(es.spec.data.map((d: Any) => d.secretKey).sort()).toEqual(["ADMIN_TOKEN", "GITHUB_APP_PRIVATE_KEY", "GITHUB_WEBHOOK_SECRET"]);
  });

  it("a wrong value is caught: an overlay whose image is not changed keeps the release's image", () => {
    const plain = localCopy("plain").dir;
    const k = join(plain, "server/kustomization.yaml");
    writeFileSync(k, readFileSync(k, "utf8").replace(/images:[\s\S]*?newTag: \S+\n/, ""));
    const image = byKind(kustomize(plain), "Deployment")[0].spec.template.spec.containers[0].image;
    expect(image).toBe(release.serverImage);
    expect(image).not.toBe(container.image);
  });
});
