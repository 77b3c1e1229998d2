// npm run setup's cluster step when kubectl has a context: a stand-in kubectl on
// PATH (it records its argv and stdin) shows that the agent's token Secret goes
// through stdin only, that the overlay is applied with `apply -k`, and that a
// Secret setup did not make is named and kept.
import { createHmac } from "node:crypto";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { resolveAnswers } from "../../../scripts/setup/answers.ts";
import { agentClusterStep } from "../../../scripts/setup/cluster-step.ts";
import type { Say, StepContext } from "../../../scripts/setup/context.ts";
import { secretServer } from "../../../scripts/setup/secret-server.ts";
import { emptyState } from "../../../scripts/setup/state.ts";
import { ROOT } from "../../../scripts/lib/local-stack.ts";
import { configCopy } from "./setup-rig.ts";

let work: string;
const savedPath = process.env["PATH"];
const AGENT_TOKEN = "a".repeat(64);

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "arc-reaper-setup-kubectl-"));
  // Answers: current-context "prod"; `get secret` as FAKE_SECRET says; everything else succeeds. Records each call.
  const fake = join(work, "kubectl");
  writeFileSync(
    fake,
    `#!${process.execPath}
const fs = require("node:fs");
const args = process.argv.slice(2);
let stdin = "";
try { stdin = args.includes("-") ? fs.readFileSync(0, "utf8") : ""; } catch {}
fs.appendFileSync(process.env.FAKE_LOG, JSON.stringify({ args, stdin }) + "\\n");
if (args[0] === "config" && args[1] === "current-context") { process.stdout.write("prod\\n"); process.exit(0); }
if (args.includes("get") && args.includes("secret")) {
  const owner = process.env.FAKE_SECRET;
  if (owner === "none") { process.stderr.write('Error from server (NotFound): secrets "arc-reaper-agent-token" not found\\n'); process.exit(1); }
  process.stdout.write(owner); process.exit(0);
}
process.stdout.write("configured\\n");
`,
  );
  chmodSync(fake, 0o755);
  process.env["PATH"] = [work, savedPath ?? ""].join(delimiter);
});
afterAll(() => {
  process.env["PATH"] = savedPath;
  rmSync(work, { recursive: true, force: true, maxRetries: 5 });
});
afterEach(() => {
  delete process.env["FAKE_SECRET"];
  delete process.env["FAKE_LOG"];
});

const quiet: Say = { step: () => undefined, done: () => undefined, info: () => undefined, warn: () => undefined };

async function context(name: string, extra: Record<string, string | boolean> = {}): Promise<{ c: StepContext; said: string[] }> {
  const stateDir = join(work, name);
  const a = await resolveAnswers(
    { org: "octo-org", clusters: "default", namespaces: "arc-runners", "state-dir": stateDir, apply: true, ...extra },
    undefined,
    ROOT,
    {},
  );
  const said: string[] = [];
  const state = emptyState();
  state.worker = {
    name: "arc-reaper",
    url: "https://arc-reaper.octo-org.workers.dev",
    createdBySetup: true,
    config: join(stateDir, "wrangler.toml"),
    digest: "x",
  };
  state.secretsBySetup = ["AGENT_TOKEN"];
  const c: StepContext = {
    a,
    root: ROOT,
    state,
    save: () => undefined,
    say: { ...quiet, done: (t) => said.push(t), warn: (t) => said.push(`warning: ${t}`), info: (t) => said.push(t) },
    wrangler: { root: ROOT, config: configCopy(stateDir), env: "production" },
    memory: new Map([["AGENT_TOKEN", AGENT_TOKEN]]),
    ask: undefined,
    open: () => undefined,
  };
  return { c, said };
}

function calls(log: string): { args: string[]; stdin: string }[] {
  return existsSync(log)
    ? readFileSync(log, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { args: string[]; stdin: string })
    : [];
}

describe("setup's cluster step with a kubectl context", () => {
  it("applies the Secret through stdin and the overlay with apply -k; the token is on no command line", async () => {
    const log = join(work, "log-apply.jsonl");
    process.env["FAKE_LOG"] = log;
    process.env["FAKE_SECRET"] = "none";
    const { c, said } = await context("apply");
    const serve = secretServer();
    await agentClusterStep(c, serve);
    await serve.close();
    const token = createHmac("sha256", AGENT_TOKEN).update("default").digest("hex");
    const seen = calls(log);
    const secretApply = seen.find((k) => k.args.join(" ") === "--context prod apply -f -");
    expect(secretApply?.stdin).toContain(`AGENT_TOKEN: ${Buffer.from(token).toString("base64")}`);
    expect(secretApply?.stdin).toContain("app.kubernetes.io/managed-by: arc-reaper-setup");
    expect(seen.some((k) => k.args.slice(0, 4).join(" ") === "--context prod apply -k" && k.args[4]?.endsWith("agent-default"))).toBe(true);
    for (const k of seen) expect(k.args.join(" ")).not.toContain(token);
    expect(c.state.clusters["default"]).toMatchObject({ secret: "created", applied: true });
    expect(said.join("\n")).toMatch(/cluster default: applied .* with context prod/);
  });

  it("names a token Secret it did not make and keeps it (no Secret applied), unless --replace", async () => {
    const log = join(work, "log-kept.jsonl");
    process.env["FAKE_LOG"] = log;
    process.env["FAKE_SECRET"] = "someone-else";
    const { c, said } = await context("kept");
    const serve = secretServer();
    await agentClusterStep(c, serve);
    await serve.close();
    expect(calls(log).some((k) => k.args.includes("-f"))).toBe(false);
    expect(c.state.clusters["default"]).toMatchObject({ secret: "kept", applied: true });
    expect(said.join("\n")).toMatch(/Secret arc-reaper-agent-token was there before setup: kept/);

    const replaceLog = join(work, "log-replace.jsonl");
    process.env["FAKE_LOG"] = replaceLog;
    const again = await context("replace", { replace: true });
    const serve2 = secretServer();
    await agentClusterStep(again.c, serve2);
    await serve2.close();
    expect(calls(replaceLog).some((k) => k.args.join(" ") === "--context prod apply -f -")).toBe(true);
  });
});
