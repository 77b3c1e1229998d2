// .github/workflows: every workflow read by GitHub's own parser
// (@actions/workflow-parser, the one behind the Actions language service), so a
// workflow GitHub would refuse fails here first; then what each must do: CI runs
// .ci/run on pushes and pull requests, a version tag builds and pushes the
// images for two platforms with provenance and attaches the rendered manifests.
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { convertWorkflowTemplate, NoOperationTraceWriter, parseWorkflow } from "@actions/workflow-parser";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { readRelease } from "../../../scripts/lib/release.ts";
import { isJsonObject, type KubeObject } from "../infra/infra-rbac.ts";
import { validateKubeObject } from "../infra/kube-validate.ts";
import { hasKubectl } from "../infra/kubectl.ts";

const ROOT = resolve(import.meta.dirname, "../../..");
const DIR = join(ROOT, ".github/workflows");
const files = readdirSync(DIR).filter((f) => /\.ya?ml$/.test(f));

/** GitHub's parser's errors for one workflow (empty: GitHub accepts it). */
async function workflowErrors(name: string, content: string): Promise<string[]> {
  const parsed = parseWorkflow({ name, content }, new NoOperationTraceWriter());
  const errors = parsed.context.errors.getErrors().map((e) => e.message);
  if (parsed.value === undefined) return errors.length > 0 ? errors : [`${name}: no workflow`];
  const template = await convertWorkflowTemplate(parsed.context, parsed.value);
  return [...new Set([...errors, ...(template.errors ?? []).map((e) => e.Message)])];
}

// biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression, not a JavaScript template.
const BROKEN_EXPRESSION = "on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - run: echo ${{ foo( }}\n";

// biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression, not a JavaScript template.
const DIGEST_EXPRESSION = "${{ steps.agent.outputs.digest }}";

// biome-ignore lint/suspicious/noTemplateCurlyInString: GitHub Actions expressions, not a JavaScript template.
const AGENT_TAGS = "${{ steps.version.outputs.agent-image }}:${{ steps.version.outputs.version }}";

interface Step {
  name?: string;
  uses?: string;
  run?: string;
  with?: Record<string, unknown>;
}
interface Workflow {
  on: Record<string, unknown>;
  jobs: Record<string, { steps: Step[] }>;
}
const read = (file: string): Workflow => parseYaml(readFileSync(join(DIR, file), "utf8")) as Workflow;
const steps = (w: Workflow): Step[] => Object.values(w.jobs).flatMap((j) => j.steps);

describe("GitHub Actions workflows", () => {
  it("there are a CI and a release workflow", () => {
    expect(files.sort()).toEqual(["ci.yml", "release.yml"]);
  });

  it.each(files)("%s is a workflow GitHub's parser accepts", async (file) => {
    expect(await workflowErrors(file, readFileSync(join(DIR, file), "utf8"))).toEqual([]);
  });

  it("the check can fail: an unknown key, a broken expression, a job without runs-on are named", async () => {
    expect(await workflowErrors("bad.yml", "on: push\njobs:\n  a:\n    runs-on: x\n    stepz: []\n")).toEqual([
      expect.stringContaining("Unexpected value 'stepz'"),
    ]);
    expect((await workflowErrors("bad.yml", BROKEN_EXPRESSION)).join()).toMatch(/Line: 6.*expression/);
    expect((await workflowErrors("bad.yml", "on: push\njobs:\n  a:\n    steps:\n      - run: echo\n")).join()).toMatch(/runs-on/);
    // The real CI workflow with one typo is refused too.
    const ci = readFileSync(join(DIR, "ci.yml"), "utf8").replace("runs-on:", "runs_on:");
    expect(await workflowErrors("ci.yml", ci)).not.toEqual([]);
  });

  it("CI runs .ci/run (the README's test command) on every push and pull request", () => {
    const ci = read("ci.yml");
    expect(Object.keys(ci.on).sort()).toEqual(["pull_request", "push"]);
    expect(
      steps(ci)
        .map((s) => s.run?.trim())
        .filter(Boolean),
    ).toEqual(["bash .ci/run"]);
    expect(readFileSync(join(ROOT, ".ci/run"), "utf8")).toMatch(/^npm test$/m);
  });

  it("a version tag builds the agent's image for amd64 and arm64 with provenance, pushed to ghcr.io, and attaches the manifests", () => {
    const release = read("release.yml");
    expect(release.on).toEqual({ push: { tags: ["v*"] } });
    const text = readFileSync(join(DIR, "release.yml"), "utf8");
    const builds = steps(release).filter((s) => s.uses?.startsWith("docker/build-push-action@"));
    // The server's image too, once the Dockerfile has a target for it.
    const targets = [...readFileSync(join(ROOT, "Dockerfile"), "utf8").matchAll(/^FROM\s+\S+\s+AS\s+(\S+)/gim)].map((m) => m[1]);
    const serverTargets = targets.filter((t) => t !== undefined && /server/i.test(t));
    expect(builds.length).toBe(1 + serverTargets.length);
    for (const b of builds) {
      expect(b.with).toMatchObject({ platforms: "linux/amd64,linux/arm64", push: true, provenance: "mode=max" });
    }
    for (const t of serverTargets)
      expect(
        builds.some((b) => b.with?.["target"] === t),
        `a build of Dockerfile target ${t}`,
      ).toBe(true);
    // Each build names its stage, so a stage added to the Dockerfile never changes what another build makes.
    expect(targets).toContain("agent");
    expect(builds.find((b) => b.with?.["target"] === "agent")?.with?.["tags"]).toBe(AGENT_TAGS);
    for (const b of builds) expect(targets).toContain(b.with?.["target"]);
    // The image the release publishes is the one setup and infra/agent name.
    const { agentImage } = readRelease(ROOT);
    expect(agentImage).toMatch(/^ghcr\.io\/[a-z0-9-]+\/arc-reaper-agent:/);
    expect(text).toContain('echo "agent-image=ghcr.io/$owner/arc-reaper-agent"');
    expect(text).toMatch(/GITHUB_REF_NAME" != "v\$version"/);
    // The rendered manifests, attached to the release.
    expect(text).toMatch(/kubectl kustomize dist\/agent-overlay > "dist\/arc-reaper-agent-\$VERSION\.yaml"/);
    expect(steps(release).some((s) => s.run?.includes("gh release create") && s.run.includes("dist/*.yaml"))).toBe(true);
  });

  it.skipIf(!hasKubectl)("the release's render step, run as written, makes the agent's manifests pinned to the pushed image's digest", () => {
    const render = steps(read("release.yml")).find((s) => s.name === "Render the manifests")?.run ?? "";
    const digest = `sha256:${"a".repeat(64)}`;
    const work = mkdtempSync(join(tmpdir(), "arc-reaper-release-"));
    try {
      cpSync(join(ROOT, "infra"), join(work, "infra"), { recursive: true });
      writeFileSync(join(work, "render.sh"), render.replaceAll(DIGEST_EXPRESSION, digest));
      const { version, agentImage } = readRelease(ROOT);
      execFileSync("bash", ["-euo", "pipefail", "render.sh"], {
        cwd: work,
        env: { ...process.env, IMAGE: agentImage.replace(/:[^:]+$/, ""), VERSION: version },
        stdio: "pipe",
      });
      expect(
        readdirSync(join(work, "dist"))
          .filter((f) => f.endsWith(".yaml"))
          .sort(),
      ).toEqual([`arc-reaper-agent-${version}.yaml`, `arc-reaper-agent-finish-stuck-${version}.yaml`, `arc-reaper-direct-rbac-${version}.yaml`].sort());
      const agent = (parseAllYaml(readFileSync(join(work, "dist", `arc-reaper-agent-${version}.yaml`), "utf8")) as KubeObject[]).filter(isJsonObject);
      for (const o of agent) validateKubeObject(o as KubeObject);
      expect(JSON.stringify(agent)).toContain(`"image":"${agentImage}@${digest}"`);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
});

function parseAllYaml(text: string): unknown[] {
  return text.split(/^---$/m).map((d) => parseYaml(d) as unknown);
}
