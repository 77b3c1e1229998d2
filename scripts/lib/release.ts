// The release's one source: package.json's `version` (what a release is called:
// tag v<version>, image tag <version>) and `repository` (where the release
// workflow publishes the images: ghcr.io/<owner>/arc-reaper-agent and
// ghcr.io/<owner>/arc-reaper-server). Setup's defaults, the
// manifests and the docs take their version and image from here, and
// test/node/repo/release-version.test.ts fails when a copy drifts.
import { readFileSync } from "node:fs";
import { join } from "node:path";

export interface Release {
  version: string;
  /** The GitHub repository the release is made from, "owner/name". */
  repository: string;
  /** The agent's image as the release workflow publishes it, with its tag. */
  agentImage: string;
  /** The in-cluster server's image (Dockerfile.server) as the release workflow publishes it, with its tag. */
  serverImage: string;
}

const SEMVER = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/;

export function readRelease(root: string): Release {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version?: unknown; repository?: { url?: unknown } };
  const version = pkg.version;
  if (typeof version !== "string" || !SEMVER.test(version)) throw new Error(`package.json version ${JSON.stringify(version)} is not a semantic version`);
  const url = pkg.repository?.url;
  const m = typeof url === "string" ? /github\.com[/:]([^/]+)\/([^/.]+)(?:\.git)?$/.exec(url) : null;
  if (m === null) throw new Error(`package.json repository.url ${JSON.stringify(url)} does not name a GitHub repository`);
  const owner = m[1]!.toLowerCase();
  return {
    version,
    repository: `${m[1]}/${m[2]}`,
    agentImage: `ghcr.io/${owner}/arc-reaper-agent:${version}`,
    serverImage: `ghcr.io/${owner}/arc-reaper-server:${version}`,
  };
}
