// `npm run images [-- --json FILE] [-- --pinned-bases]`: both images built here,
// daemonless (buildah), from the Dockerfiles the release builds (Dockerfile's
// target `agent`, Dockerfile.server), for this machine's architecture; then
// each run from its own root filesystem as its pod runs it: the server reaps a
// signed webhook's runner against the GitHub and Kubernetes API stand-ins, the
// agent answers its liveness probe. Prints each image's size (uncompressed, and
// gzip-compressed as a registry holds it), layers and build time (and writes
// them as JSON with --json). Exits 1 naming the step that failed.
//
// The bases: stand-ins made offline on first use (standin-node-base.ts,
// standin-runtime-base.ts; docs/images.md), named below, passed as build
// arguments with their local digests (so the images' base labels name what
// they were built on). --pinned-bases builds on the Dockerfiles' pinned
// bases instead, pulling them (needs a registry). Needs root and buildah
// (Debian: apt-get install -y buildah). The built images stay in buildah's
// store (vfs) as localhost/arc-reaper-{agent,server}:<version>.
//
// Plain Node (type stripping): erasable TypeScript only.
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ROOT } from "../server/build.ts";
import { buildah } from "./buildah.ts";
import { buildImage } from "./build-image.ts";
import { compressedSize } from "./compressed-size.ts";
import { imageExists } from "./image-exists.ts";
import { imageFacts, type ImageFacts } from "./image-facts.ts";
import { proveServerImage } from "./prove-server-image.ts";
import { reportTable, type ImageReport } from "./report-table.ts";
import { makeStandinNodeBase } from "./standin-node-base.ts";
import { makeStandinRuntimeBase } from "./standin-runtime-base.ts";
import { startAgentImage } from "./start-agent-image.ts";

const NODE_STANDIN = "localhost/arc-reaper-standin/node:24.21.0-slim";
const RUNTIME_STANDIN = "localhost/arc-reaper-standin/distroless-base:nonroot";

const facts = (image: string): ImageFacts => imageFacts(JSON.parse(buildah(["inspect", "--type", "image", image])));
const seconds = (from: number): number => (Date.now() - from) / 1000;
const say = (s: string): void => void process.stderr.write(`images: ${s}\n`);

/** Runs one step, naming it when it throws. */
async function step<T>(name: string, run: () => T | Promise<T>): Promise<T> {
  say(`${name} …`);
  try {
    return await run();
  } catch (e) {
    throw new Error(`${name} failed: ${(e as Error).message}`);
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { json: { type: "string" }, "pinned-bases": { type: "boolean", default: false } } });
  if (process.getuid?.() !== 0) throw new Error("needs root: buildah's vfs store and chroot isolation, and the runs' mounts and chroot");
  await step("buildah", () => buildah(["--version"]));
  const pinned = values["pinned-bases"];
  const standins: { name: string; seconds: number; made: boolean }[] = [];
  if (!pinned) {
    for (const [name, make] of [
      [NODE_STANDIN, makeStandinNodeBase],
      [RUNTIME_STANDIN, makeStandinRuntimeBase],
    ] as const) {
      const started = Date.now();
      const made = !imageExists(name);
      if (made) await step(`the stand-in base ${name}`, () => make(name));
      standins.push({ name, seconds: seconds(started), made });
    }
  }
  const version = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;
  // As root (sudo in CI) in a checkout another user owns: git's safe.directory check would refuse it.
  const revision = execFileSync("git", ["-c", `safe.directory=${ROOT}`, "rev-parse", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim();
  const labels = { VERSION: version, REVISION: revision };
  const nodeDigest = pinned ? "" : facts(NODE_STANDIN).digest;
  const runtimeDigest = pinned ? "" : facts(RUNTIME_STANDIN).digest;
  const nodeArgs: Record<string, string> = pinned ? {} : { NODE_BASE: NODE_STANDIN, NODE_DIGEST: nodeDigest, NODE_IMAGE: `${NODE_STANDIN}@${nodeDigest}` };
  const runtimeArgs: Record<string, string> = pinned
    ? {}
    : { RUNTIME_BASE: RUNTIME_STANDIN, RUNTIME_DIGEST: runtimeDigest, RUNTIME_IMAGE: `${RUNTIME_STANDIN}@${runtimeDigest}` };

  const agent = `localhost/arc-reaper-agent:${version}`;
  const server = `localhost/arc-reaper-server:${version}`;
  const agentSeconds = await step(`building ${agent} (Dockerfile, target agent)`, () =>
    buildImage({ file: "Dockerfile", target: "agent", tag: agent, buildArgs: { ...labels, ...nodeArgs }, pull: pinned }),
  );
  const serverSeconds = await step(`building ${server} (Dockerfile.server)`, () =>
    buildImage({
      file: "Dockerfile.server",
      ignorefile: "Dockerfile.server.dockerignore",
      tag: server,
      buildArgs: { ...labels, ...nodeArgs, ...runtimeArgs },
      pull: pinned,
    }),
  );
  const agentStart = await step(`starting ${agent} as its pod runs it`, () => startAgentImage(agent));
  const proof = await step(`running ${server} as its pod runs it, against the stand-ins`, () => proveServerImage(server));

  const [agentFacts, serverFacts] = [facts(agent), facts(server)];
  await step("the images' labels", () => {
    for (const [image, f] of [
      [agent, agentFacts],
      [server, serverFacts],
    ] as const) {
      const want = { version, revision, licenses: "Apache-2.0" };
      for (const [k, v] of Object.entries(want)) {
        const got = f.labels[`org.opencontainers.image.${k}`];
        if (got !== v) throw new Error(`${image}'s org.opencontainers.image.${k} is ${JSON.stringify(got)}, not ${JSON.stringify(v)}`);
      }
    }
  });
  const baseOf = (f: ImageFacts) => facts(`${f.labels["org.opencontainers.image.base.name"]}@${f.labels["org.opencontainers.image.base.digest"]}`).layers;
  const row = (image: string, f: ImageFacts, buildSeconds: number, check: string): ImageReport => ({
    image,
    sizeMB: f.bytes / 1e6,
    compressedMB: compressedSize(image) / 1e6,
    layers: f.layers,
    baseLayers: baseOf(f),
    buildSeconds,
    check,
  });
  const rows: ImageReport[] = [
    row(agent, agentFacts, agentSeconds, `/livez 200 in ${agentStart.liveMs} ms (uid ${agentStart.process.uid}, no capabilities, read-only root)`),
    row(
      server,
      serverFacts,
      serverSeconds,
      `/healthz 200 in ${proof.readyMs} ms; runner DELETEd ${proof.webhookToDeleteMs} ms after its webhook (uid ${proof.process.uid}, no capabilities, read-only root)`,
    ),
  ];
  process.stdout.write(`${reportTable(rows)}\n`);
  for (const b of standins) process.stdout.write(`${b.name}: ${b.made ? `made in ${b.seconds.toFixed(1)} s` : "present"}\n`);
  if (values.json) {
    const report = {
      architecture: process.arch,
      bases: pinned ? "pinned (the Dockerfiles' digests)" : standins,
      images: rows.map((r, i) => ({ ...r, labels: [agentFacts, serverFacts][i]?.labels })),
      agent: agentStart,
      server: proof,
    };
    writeFileSync(values.json, `${JSON.stringify(report, null, 2)}\n`);
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`npm run images: ${(e as Error).message}\n`);
    process.exit(1);
  },
);
