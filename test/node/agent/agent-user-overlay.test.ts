// infra/examples/agent: a user's own overlay of the agent, consuming the base by
// URL at a release tag, rendered by `kubectl kustomize` exactly as written except
// that the URLs point at this checkout (kubectl is offline here). The result must
// carry the user's image, cluster, URL and namespaces, and pass the same checks
// as infra/agent itself.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readSettings } from "../../../src/agent/settings.ts";
import { readRelease } from "../../../scripts/lib/release.ts";
import { INFRA_AGENT_DIR } from "./agent-rbac.ts";
import { listYamlFiles, objectId, renderKustomization } from "../infra/infra-rbac.ts";
import { localOverlayCopy, type RemoteBase } from "../infra/user-overlay.ts";
import { validateKubeObject } from "../infra/kube-validate.ts";
import { hasKubectl, kustomize } from "../infra/kubectl.ts";

const ROOT = resolve(INFRA_AGENT_DIR, "../..");
const EXAMPLE = join(ROOT, "infra/examples/agent");
const release = readRelease(ROOT);
const work = mkdtempSync(join(tmpdir(), "arc-reaper-overlay-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The example copied to a scratch directory, its remote bases pointed at this checkout; every remote it names, returned. */
function localCopy(): { dir: string; remotes: RemoteBase[] } {
  const dir = join(work, "overlay");
  return { dir, remotes: localOverlayCopy(EXAMPLE, dir, ROOT) };
}

describe.skipIf(!hasKubectl)("a user's overlay of the agent (infra/examples/agent)", () => {
  const { dir, remotes } = localCopy();
  const objects = kustomize(dir);
  const deployment = objects.find((o) => o.kind === "Deployment") as unknown as {
    spec: { template: { spec: { containers: Array<{ image: string; env: Array<{ name: string; value?: string; valueFrom?: unknown }> }> } } };
  };
  const container = deployment.spec.template.spec.containers[0]!;
  const env = Object.fromEntries(container.env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value!]));

  it("takes arc-reaper's base by URL at this release's tag, never a path into a checkout", () => {
    expect(remotes.length).toBeGreaterThanOrEqual(3);
    for (const r of remotes) {
      expect(r.repository).toBe(release.repository);
      expect(r.ref).toBe(`v${release.version}`);
      expect(["infra/agent/base", "infra/agent/runner-namespace", "infra/agent/cluster-identity"]).toContain(r.path);
    }
    for (const file of listYamlFiles(EXAMPLE)) expect(readFileSync(file, "utf8"), file).not.toMatch(/resources:[\s\S]*- \.\.\//);
  });

  it("renders valid objects: the agent with the user's image, cluster, URL and namespaces", () => {
    for (const o of objects) validateKubeObject(o);
    expect(container.image).toBe(`registry.example.com/mirror/arc-reaper-agent:${release.version}`);
    expect(env).toMatchObject({
      ARC_REAPER_URL: "https://arc-reaper.example.com",
      AGENT_CLUSTER: "eu-west",
      REAPER_NAMESPACES: "team-a-runners,team-b-runners",
      HTTPS_PROXY: "http://proxy.example.com:3128",
    });
    // The base's own settings stay: the token from its Secret, the probes' port, dry run off.
    expect(container.env.find((e) => e.name === "AGENT_TOKEN")?.valueFrom).toEqual({ secretKeyRef: { name: "arc-reaper-agent-token", key: "AGENT_TOKEN" } });
    expect(env["AGENT_DRY_RUN"]).toBe("false");
    expect(objects.filter((o) => o.kind === "Secret")).toEqual([]);
    const settings = readSettings({ ...env, AGENT_TOKEN: "x".repeat(64) });
    expect(settings).toMatchObject({ ok: true, settings: { cluster: "eu-west", namespaces: ["team-a-runners", "team-b-runners"] } });
  });

  it("grants the agent its Role in exactly the namespaces it watches, and the same objects as infra/agent otherwise", () => {
    const bound = objects.filter((o) => o.kind === "RoleBinding").map((o) => o.metadata.namespace);
    // And kube-system's: get on that namespace object, the cluster's identity in the agent's hello.
    expect(bound.sort()).toEqual(["kube-system", "team-a-runners", "team-b-runners"]);
    const ours = renderKustomization(INFRA_AGENT_DIR)
      .filter((o) => o.metadata.namespace !== "arc-runners" && o.metadata.namespace !== "kube-system")
      .map(objectId);
    expect(
      objects
        .filter((o) => !o.kind.startsWith("Role"))
        .map(objectId)
        .sort(),
    ).toEqual(ours.sort());
  });

  it("lets the agent reach its proxy: one egress rule more than the base's NetworkPolicy", () => {
    const np = objects.find((o) => o.kind === "NetworkPolicy") as unknown as { spec: { egress: Array<{ ports: Array<{ port: number }> }> } };
    const base = renderKustomization(INFRA_AGENT_DIR).find((o) => o.kind === "NetworkPolicy") as unknown as typeof np;
    expect(np.spec.egress.slice(0, -1)).toEqual(base.spec.egress);
    expect(np.spec.egress.at(-1)?.ports).toEqual([{ protocol: "TCP", port: 3128 }]);
  });

  it("a wrong value is caught: an overlay whose image is not changed keeps the release's image", () => {
    const plain = join(work, "plain");
    cpSync(dir, plain, { recursive: true });
    const k = join(plain, "kustomization.yaml");
    writeFileSync(k, readFileSync(k, "utf8").replace(/images:[\s\S]*?newTag: \S+\n/, ""));
    const image = (kustomize(plain).find((o) => o.kind === "Deployment") as unknown as typeof deployment).spec.template.spec.containers[0]?.image;
    expect(image).toBe(release.agentImage);
    expect(image).not.toBe(container.image);
  });
});
