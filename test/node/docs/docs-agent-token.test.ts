// The by-hand guide (docs/deploy.md) keeps the Worker's AGENT_TOKEN off every
// cluster: each Secret it makes holds a cluster's own token (the HMAC of the
// cluster's name keyed with AGENT_TOKEN), and the command it gives for the
// cluster `default` makes the very token the Worker admits for `default`.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { admitsCluster, clusterToken } from "../../../src/http/agent-token.ts";

const guide = readFileSync(join(import.meta.dirname, "../../../docs/deploy.md"), "utf8");
const MASTER_FILE = "/tmp/arc-reaper-agent-token";

describe("docs/deploy.md and AGENT_TOKEN", () => {
  it("never puts the Worker's AGENT_TOKEN into a cluster's Secret", () => {
    const secrets = [...guide.matchAll(/--from-file=AGENT_TOKEN=(\S+)/g)].map((m) => m[1]);
    expect(secrets.length).toBeGreaterThanOrEqual(2);
    expect(secrets).not.toContain(MASTER_FILE);
    expect(guide).not.toMatch(/get secret arc-reaper-agent-token[^\n]*wrangler secret put AGENT_TOKEN/);
  });

  it("its command for the cluster default makes the token the Worker admits for default", async () => {
    const line = guide.split("\n").find((l) => l.includes("printf %s default | openssl dgst"));
    expect(line).toBeDefined();
    const dir = mkdtempSync(join(tmpdir(), "arc-reaper-docs-"));
    try {
      const master = "0123456789abcdef".repeat(4);
      writeFileSync(join(dir, "master"), master);
      const command = line!.trim().replaceAll(MASTER_FILE, join(dir, "master")).replaceAll("/tmp/agent-token-default", join(dir, "default"));
      execFileSync("bash", ["-c", command]);
      const made = readFileSync(join(dir, "default"), "utf8").trim();
      expect(made).toBe(await clusterToken(master, "default"));
      expect(await admitsCluster(master, "default", made)).toBe(true);
      expect(await admitsCluster(master, "eu-west", made)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
