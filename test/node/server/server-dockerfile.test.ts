// Dockerfile.server, checked without docker (`npm run images` builds and runs the
// image itself, where buildah is): the bases pinned by digest, the OCI labels; the
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

/** A Dockerfile's reference to an ARG, as written: ${NAME}. */
const ref = (name: string): string => `\${${name}}`;
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

/** The global ARGs' defaults (before the first FROM). */
const argDefaults = new Map(
  text
    .split("\n")
    .slice(
      0,
      text.split("\n").findIndex((l) => /^FROM /i.test(l)),
    )
    .flatMap((l) => {
      const m = /^ARG (\w+)=(\S+)$/.exec(l.trim());
      return m ? [[m[1] ?? "", m[2] ?? ""] as const] : [];
    }),
);

describe("Dockerfile.server", () => {
  it("builds on bases pinned by digest: the same Node as Dockerfile's, distroless's nonroot runtime", () => {
    expect(build[0]).toMatch(/^FROM \$\{NODE_IMAGE\} AS build$/);
    expect(final[0]).toMatch(/^FROM \$\{RUNTIME_IMAGE\} AS server$/);
    expect(argDefaults.get("RUNTIME_BASE")).toBe("gcr.io/distroless/base-debian12:nonroot");
    for (const name of ["NODE", "RUNTIME"]) {
      expect(argDefaults.get(`${name}_DIGEST`)).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(argDefaults.get(`${name}_IMAGE`)).toBe(`${ref(`${name}_BASE`)}@${ref(`${name}_DIGEST`)}`);
    }
    // One Node in both images: the agent's base and the server's build stage.
    const agent = readFileSync(join(ROOT, "Dockerfile"), "utf8");
    for (const name of ["NODE_BASE", "NODE_DIGEST"]) expect(agent).toContain(`ARG ${name}=${argDefaults.get(name)}`);
    expect(argDefaults.get("NODE_BASE")).toBe(`docker.io/library/node:${json("package.json").devDependencies?.node}-slim`);
  });

  it("labels the image (OCI): source, version, revision, licenses, title, and the base it runs on", () => {
    const labels = Object.fromEntries(
      final.filter((l) => l.startsWith("LABEL ")).flatMap((l) => [...l.matchAll(/([\w.-]+)="([^"]*)"/g)].map((m) => [m[1] ?? "", m[2] ?? ""])),
    );
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { license: string; repository: { url: string } };
    expect(labels).toEqual({
      "org.opencontainers.image.title": "arc-reaper-server",
      "org.opencontainers.image.description": expect.any(String),
      "org.opencontainers.image.source": pkg.repository.url.replace(/^git\+/, "").replace(/\.git$/, ""),
      "org.opencontainers.image.licenses": pkg.license,
      "org.opencontainers.image.version": ref("VERSION"),
      "org.opencontainers.image.revision": ref("REVISION"),
      "org.opencontainers.image.base.name": ref("RUNTIME_BASE"),
      "org.opencontainers.image.base.digest": ref("RUNTIME_DIGEST"),
    });
    for (const name of ["VERSION", "REVISION", "RUNTIME_BASE", "RUNTIME_DIGEST"])
      expect(
        final.some((l) => new RegExp(`^ARG ${name}(=|$)`).test(l)),
        name,
      ).toBe(true);
  });

  it("runs workerd on the built config, as a numeric non-root user, on distroless with nothing else copied in", () => {
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
