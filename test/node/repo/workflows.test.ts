// .github/workflows: every workflow read by GitHub's own parser
// (@actions/workflow-parser, the one behind the Actions language service), so a
// workflow GitHub would refuse fails here first; then what each must do: every
// action pinned by commit SHA, read-only unless a job says otherwise, no
// checkout keeping its token; CI runs .ci/run on pushes and pull requests; a
// version tag runs it too, then builds, signs and attests both images for two
// platforms and attaches the rendered manifests with their checksums.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
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

// biome-ignore lint/suspicious/noTemplateCurlyInString: GitHub Actions expressions, not a JavaScript template.
const AGENT_TAGS = "${{ steps.version.outputs.agent-image }}:${{ steps.version.outputs.version }}";
// biome-ignore lint/suspicious/noTemplateCurlyInString: GitHub Actions expressions, not a JavaScript template.
const SERVER_TAGS = "${{ steps.version.outputs.server-image }}:${{ steps.version.outputs.version }}";

interface Step {
  id?: string;
  name?: string;
  uses?: string;
  run?: string;
  env?: Record<string, string>;
  with?: Record<string, unknown>;
}
interface Workflow {
  on: Record<string, unknown>;
  permissions?: unknown;
  jobs: Record<string, { steps: Step[]; permissions?: unknown; needs?: string }>;
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

  it.each(files)("%s runs every action pinned by a full commit SHA, its version in a comment", (file) => {
    expect(unpinnedActions(readFileSync(join(DIR, file), "utf8"))).toEqual([]);
  });

  it("the pin check can fail: a tag, a branch, a short SHA or a SHA without its version are named", () => {
    const text = [
      "      - uses: actions/checkout@v4",
      "      - uses: docker/login-action@main # v3",
      "      - uses: a/b@74a5d14 # v3",
      `      - uses: a/b@${"a".repeat(40)}`,
      `      - uses: a/b@${"b".repeat(40)} # v1.2.3`,
      "      - uses: ./.github/actions/local",
    ].join("\n");
    expect(unpinnedActions(text)).toEqual(["1: actions/checkout@v4", "2: docker/login-action@main # v3", "3: a/b@74a5d14 # v3", `4: a/b@${"a".repeat(40)}`]);
  });

  it.each(files)("%s is read-only by default, every job declares its permissions, every checkout drops its token", (file) => {
    const w = read(file);
    expect(w.permissions).toEqual({ contents: "read" });
    for (const [name, job] of Object.entries(w.jobs)) {
      expect(job.permissions, `job ${name}`).toBeDefined();
      for (const s of job.steps.filter((x) => x.uses?.startsWith("actions/checkout@"))) expect(s.with?.["persist-credentials"], `job ${name}`).toBe(false);
    }
  });

  it("a version tag publishes only after a read-only job passed everything .ci/run runs, the image check included", () => {
    const release = read("release.yml");
    expect(release.on).toEqual({ push: { tags: ["v*"] } });
    expect(Object.keys(release.jobs).sort()).toEqual(["check", "publish"]);
    expect(release.jobs["check"]?.permissions).toEqual({ contents: "read" });
    expect(release.jobs["check"]?.steps.map((s) => s.run?.trim())).toContain("bash .ci/run");
    expect(release.jobs["publish"]?.needs).toBe("check");
    expect(release.jobs["publish"]?.permissions).toEqual({ contents: "write", packages: "write", "id-token": "write", attestations: "write" });
    // .ci/run ends with the image check: both images built, the server run against the stand-ins (docs/images.md).
    expect(readFileSync(join(ROOT, ".ci/run"), "utf8")).toMatch(/^as_root npm run images$/m);
  });

  it("publishes both images for amd64 and arm64, each signed, with an SBOM attestation and provenance on its digest", () => {
    const publish = read("release.yml").jobs["publish"]!.steps;
    const builds = publish.filter((s) => s.uses?.startsWith("docker/build-push-action@"));
    expect(builds.map((b) => [b.id, b.with?.["file"], b.with?.["target"], b.with?.["tags"]])).toEqual([
      ["server", "Dockerfile.server", "server", SERVER_TAGS],
      ["agent", "Dockerfile", "agent", AGENT_TAGS],
    ]);
    for (const b of builds) {
      expect(b.with).toMatchObject({ platforms: "linux/amd64,linux/arm64", push: true, provenance: "mode=max", sbom: true });
      // Each build names its stage, so a stage added to a Dockerfile never changes what a build makes.
      expect(stages(String(b.with?.["file"]))).toContain(b.with?.["target"]);
      // The labels' version and revision (the Dockerfiles' ARGs); the source label is the repository package.json names.
      expect(String(b.with?.["build-args"]).trim().split("\n")).toEqual([
        expect.stringMatching(/^VERSION=.*outputs\.version/),
        expect.stringMatching(/^REVISION=.*github\.sha/),
      ]);
    }
    for (const id of ["server", "agent"]) {
      const digest = `\${{ steps.${id}.outputs.digest }}`;
      const image = `\${{ steps.version.outputs.${id}-image }}`;
      const sign = publish.find((s) => s.run?.startsWith("cosign sign --yes"));
      expect(Object.values(sign?.env ?? {})).toContain(`${image}@${digest}`);
      for (const action of ["actions/attest-sbom@", "actions/attest-build-provenance@"]) {
        const attest = publish.filter((s) => s.uses?.startsWith(action) && s.with?.["subject-digest"] === digest);
        expect(
          attest.map((s) => s.with),
          `${action} ${id}`,
        ).toEqual([expect.objectContaining({ "subject-name": image, "push-to-registry": true })]);
      }
      const sbom = publish.find((s) => s.uses?.startsWith("anchore/sbom-action@") && s.with?.["image"] === `${image}@${digest}`);
      expect(publish.find((s) => s.uses?.startsWith("actions/attest-sbom@") && s.with?.["subject-digest"] === digest)?.with?.["sbom-path"]).toBe(
        sbom?.with?.["output-file"],
      );
    }
    // The images the release publishes are the ones setup, infra/server and infra/agent name.
    const text = readFileSync(join(DIR, "release.yml"), "utf8");
    const { agentImage, serverImage } = readRelease(ROOT);
    expect(agentImage).toMatch(/^ghcr\.io\/[a-z0-9-]+\/arc-reaper-agent:/);
    expect(serverImage).toMatch(/^ghcr\.io\/[a-z0-9-]+\/arc-reaper-server:/);
    expect(text).toContain('echo "agent-image=ghcr.io/$owner/arc-reaper-agent"');
    expect(text).toContain('echo "server-image=ghcr.io/$owner/arc-reaper-server"');
    expect(text).toMatch(/GITHUB_REF_NAME" != "v\$version"/);
    expect(publish.some((s) => s.run?.includes("gh release create") && s.run.includes("dist/*.yaml dist/SHA256SUMS"))).toBe(true);
  });

  it.skipIf(!hasKubectl)(
    "the release's render step, run as written, makes every home's manifests, each image pinned to its signed digest, and their checksums",
    () => {
      const render = read("release.yml").jobs["publish"]!.steps.find((s) => s.name === "Render the manifests")?.run ?? "";
      const digests = { server: `sha256:${"a".repeat(64)}`, agent: `sha256:${"b".repeat(64)}` };
      const work = mkdtempSync(join(tmpdir(), "arc-reaper-release-"));
      try {
        cpSync(join(ROOT, "infra"), join(work, "infra"), { recursive: true });
        writeFileSync(join(work, "render.sh"), render);
        const { version, agentImage, serverImage } = readRelease(ROOT);
        const bare = (i: string) => i.replace(/:[^:]+$/, "");
        execFileSync("bash", ["-euo", "pipefail", "render.sh"], {
          cwd: work,
          env: {
            ...process.env,
            VERSION: version,
            SERVER_IMAGE: bare(serverImage),
            SERVER_DIGEST: digests.server,
            AGENT_IMAGE: bare(agentImage),
            AGENT_DIGEST: digests.agent,
          },
          stdio: "pipe",
        });
        const assets = ["server", "agent", "direct-rbac", "agent-finish-stuck", "monitoring", "monitoring-cluster"].map(
          (h) => `arc-reaper-${h}-${version}.yaml`,
        );
        expect(
          readdirSync(join(work, "dist"))
            .filter((f) => !f.endsWith("-overlay"))
            .sort(),
        ).toEqual([...assets, "SHA256SUMS"].sort());
        const sums = readFileSync(join(work, "dist/SHA256SUMS"), "utf8").trim().split("\n");
        expect(sums.map((l) => l.split(/\s+/)[1]).sort()).toEqual([...assets].sort());
        for (const l of sums) {
          const [sum, name] = l.split(/\s+/) as [string, string];
          expect(
            createHash("sha256")
              .update(readFileSync(join(work, "dist", name)))
              .digest("hex"),
            name,
          ).toBe(sum);
        }
        for (const [home, image, digest] of [
          ["server", serverImage, digests.server],
          ["agent", agentImage, digests.agent],
        ] as const) {
          const objects = (parseAllYaml(readFileSync(join(work, "dist", `arc-reaper-${home}-${version}.yaml`), "utf8")) as KubeObject[]).filter(isJsonObject);
          for (const o of objects) validateKubeObject(o as KubeObject);
          const images = JSON.stringify(objects).match(/"image":"[^"]+"/g);
          expect(images, home).toEqual([`"image":"${image}@${digest}"`]);
        }
        for (const name of assets) expect(parseAllYaml(readFileSync(join(work, "dist", name), "utf8")).filter(isJsonObject).length, name).toBeGreaterThan(0);
      } finally {
        rmSync(work, { recursive: true, force: true });
      }
    },
  );
});

/** The `uses:` lines of a workflow not pinned to a 40-hex commit SHA with a `# v…` comment, as "line: what" (local actions are fine). */
function unpinnedActions(text: string): string[] {
  const out: string[] = [];
  for (const [i, line] of text.split("\n").entries()) {
    const m = /^\s*-?\s*uses:\s*(\S+)(.*)$/.exec(line);
    if (m === null || m[1]!.startsWith("./")) continue;
    if (!/@[0-9a-f]{40}$/.test(m[1]!) || !/^\s+# v\d/.test(m[2]!)) out.push(`${i + 1}: ${`${m[1]}${m[2]}`.trim()}`);
  }
  return out;
}

/** The named stages of a Dockerfile. */
function stages(file: string): string[] {
  return [...readFileSync(join(ROOT, file), "utf8").matchAll(/^FROM\s+\S+\s+AS\s+(\S+)/gim)].map((m) => m[1]!);
}

function parseAllYaml(text: string): unknown[] {
  return text.split(/^---$/m).map((d) => parseYaml(d) as unknown);
}
