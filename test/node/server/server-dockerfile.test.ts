// Dockerfile.server, checked without docker (no daemon on this machine): the
// final stage is distroless with only /app from the build stage (workerd, the
// bundle, the config), a non-root numeric user, workerd serving the config; the
// build context holds what the build stage copies; workerd is pinned at the
// version the workers tests run on. The image's size is estimated from the
// content of its one added layer (printed, uncompressed; gzip makes workerd's
// 145 MiB about 43 MiB; the base image adds its own, about 20 MiB).
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT } from "../../../scripts/server/build.ts";

const text = readFileSync(join(ROOT, "Dockerfile.server"), "utf8");
const lines = text
  .replace(/\\\r?\n/g, " ")
  .split("\n")
  .map((l) => l.trim())
  .filter((l) => l !== "" && !l.startsWith("#"));
const stages: string[][] = [];
for (const l of lines) {
  if (/^FROM /i.test(l)) stages.push([]);
  stages.at(-1)?.push(l);
}
const final = stages.at(-1) ?? [];
const build = stages[0] ?? [];
const json = (p: string) => JSON.parse(readFileSync(join(ROOT, p), "utf8")) as Record<string, Record<string, string>>;

const work = mkdtempSync(join(tmpdir(), "arc-reaper-server-image-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The files `docker build` would send: everything the dockerignore lets in (its `!` lines). */
function contextFiles(): string[] {
  const allowed = readFileSync(join(ROOT, "Dockerfile.server.dockerignore"), "utf8")
    .split("\n")
    .filter((l) => l.startsWith("!"))
    .map((l) => l.slice(1));
  const files: string[] = [];
  const walk = (p: string): void => {
    if (statSync(join(ROOT, p)).isDirectory()) for (const e of readdirSync(join(ROOT, p))) walk(join(p, e));
    else files.push(p);
  };
  for (const a of allowed) walk(a);
  return files;
}

describe("Dockerfile.server", () => {
  it("runs workerd on the built config, as a numeric non-root user, on distroless with nothing else copied in", () => {
    expect(final[0]).toMatch(/^FROM \$\{RUNTIME_IMAGE\} AS server$/);
    expect(text).toMatch(/^ARG RUNTIME_IMAGE=gcr\.io\/distroless\/base-debian12:nonroot$/m);
    expect(final.filter((l) => /^(COPY|ADD|RUN)/.test(l))).toEqual(["COPY --from=build /app /app"]);
    expect(final).toContain("USER 65532:65532");
    expect(final.at(-1)).toBe('ENTRYPOINT ["/app/workerd", "serve", "/app/config.capnp"]');
    // The build stage writes /app at the depth it has in the image: the CA's relative path holds.
    expect(build.join("\n")).toContain("node scripts/server/build.ts --outdir /app --kube-ca /var/run/secrets/kubernetes.io/serviceaccount/ca.crt");
  });

  it("pins workerd exactly, at the version the workers tests run on", () => {
    const pinned = json("package.json").devDependencies?.workerd;
    expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
    expect(json("node_modules/workerd/package.json").version).toBe(pinned);
    expect(json("node_modules/miniflare/package.json").dependencies?.workerd).toBe(pinned);
  });

  it("builds from its context alone, and the layer it adds is the bundle, the config and workerd", () => {
    const context = join(work, "context");
    for (const f of contextFiles()) cpSync(join(ROOT, f), join(context, f), { recursive: true });
    expect(contextFiles().some((f) => f.startsWith("test/") || f.includes(".dev.vars"))).toBe(false);
    symlinkSync(join(ROOT, "node_modules"), join(context, "node_modules"));
    const app = join(work, "app");
    execFileSync(process.execPath, [join(context, "scripts/server/build.ts"), "--outdir", app, "--kube-ca", join(work, "var/run/ca.crt")], { stdio: "ignore" });
    const built = readdirSync(app).sort();
    expect(built).toEqual(["config.capnp", "front-door-limiter.js", "index.js", "kube-token-outbound.js"]);
    const binary = readFileSync(join(ROOT, "node_modules/.bin/workerd"));
    const files = [...built.map((f) => readFileSync(join(app, f))), binary];
    const bytes = files.reduce((n, b) => n + b.length, 0);
    process.stdout.write(
      `server image layer: ${(bytes / 2 ** 20).toFixed(1)} MiB uncompressed: workerd ${(binary.length / 2 ** 20).toFixed(1)} MiB, bundle ${(readFileSync(join(app, "index.js")).length / 2 ** 20).toFixed(2)} MiB\n`,
    );
    // Well under what a node image and its modules would weigh (the agent's image: ~250 MB).
    expect(bytes).toBeLessThan(200 * 2 ** 20);
  });
});
