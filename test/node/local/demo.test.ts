// npm run demo, end to end: it must end by itself, clean up, and show the
// cancelled run's runner reaped and the idle runner kept.
import { spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import type { DemoOutcome } from "../../../scripts/demo.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../../..");
const DEMO_TIMEOUT_MS = 120_000;

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/** Processes of a process group that are still alive (zombies left to an init that does not reap them do not count). */
async function liveMembers(pgid: number): Promise<string[]> {
  const live: string[] = [];
  for (const pid of (await readdir("/proc")).filter((d) => /^\d+$/.test(d))) {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
    // pid (comm) state ppid pgrp ...: comm may hold spaces, so split after its closing parenthesis.
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(pgrp) === pgid && state !== "Z") live.push(`${pid} ${stat.slice(0, stat.lastIndexOf(")") + 1)}`);
  }
  return live;
}

function runDemo(resultFile: string, extra: string[] = []): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["scripts/demo.ts", "--result", resultFile, ...extra], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    // The demo cleans up on SIGTERM; past the bound, that is what it gets.
    const timer = setTimeout(() => child.kill("SIGTERM"), DEMO_TIMEOUT_MS);
    child.once("error", reject);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

describe("npm run demo", () => {
  it("reaps the cancelled run's runner after the grace, keeps the idle one, and ends by itself", async () => {
    const dir = await mkdtemp(join(tmpdir(), "arc-reaper-demo-test-"));
    dirs.push(dir);
    const result = join(dir, "result.json");
    const run = await runDemo(result);
    expect(run.stderr, run.stdout).toBe("");
    expect(run.code, run.stdout).toBe(0);
    expect(run.ms).toBeLessThan(60_000); // a newcomer sees the whole loop in under a minute

    const outcome = JSON.parse(await readFile(result, "utf8")) as DemoOutcome;
    const byRole = (role: string) => {
      const found = outcome.runners.find((r) => r.role.includes(role));
      if (!found) throw new Error(`no runner with role ${role}`);
      return found;
    };
    const cancelled = byRole("cancelled");
    expect(cancelled.deletionTimestamp).not.toBeNull(); // as the stand-in cluster showed it
    expect(cancelled.state).toBe("reaped");
    expect(cancelled.reason).toMatch(/is cancelled, completed \d+s ago$/);
    expect(cancelled.existsAtEnd).toBe(false);

    const idle = byRole("idle");
    expect(idle).toMatchObject({ deletionTimestamp: null, state: null, reason: "idle: no job recorded for this runner", existsAtEnd: true });
    expect(byRole("running a job")).toMatchObject({ deletionTimestamp: null, state: "running", existsAtEnd: true });
    expect(byRole("past the bound")).toMatchObject({ state: "reaped", reason: expect.stringMatching(/over the bound of 3600s$/) });

    // The alarm reaped the hung runner at once and the cancelled one at the grace end; the sweeps deleted nothing.
    expect(outcome.sweeps.map((s) => [s.waiting, s.deleted])).toEqual([
      [1, 0],
      [0, 0],
    ]);
    const delay = /the ledger's alarm deleted \S+ (\d+)s after completed_at \(grace 5s\)/.exec(run.stdout);
    expect(delay, run.stdout).not.toBeNull();
    expect(Number(delay![1])).toBeGreaterThanOrEqual(5);
    expect(Number(delay![1])).toBeLessThanOrEqual(7);
    expect(run.stdout).toMatch(/sweep 1: .*\n\s+wait\s+arc-runners-\S+\s+job \d+ in octo-org\/octo-repo is cancelled, completed \ds ago; grace 5s/);
    expect(run.stdout).toContain("2 reaped, 2 kept.");

    // wrangler's whole process group is gone.
    expect(outcome.wranglerPid).toBeGreaterThan(0);
    expect(await liveMembers(outcome.wranglerPid)).toEqual([]);
  });

  it("--agent: the same loop through the in-cluster agent; the order is applied within 2 s of the grace end", async () => {
    const dir = await mkdtemp(join(tmpdir(), "arc-reaper-demo-agent-test-"));
    dirs.push(dir);
    const result = join(dir, "result.json");
    const run = await runDemo(result, ["--agent"]);
    expect(run.stderr, run.stdout).toBe("");
    expect(run.code, run.stdout).toBe(0);
    const outcome = JSON.parse(await readFile(result, "utf8")) as DemoOutcome;
    const byRole = (role: string) => outcome.runners.find((r) => r.role.includes(role));
    expect(byRole("cancelled")).toMatchObject({ state: "reaped", deletionTimestamp: expect.any(String), existsAtEnd: false });
    expect(byRole("past the bound")).toMatchObject({ state: "reaped", existsAtEnd: false });
    expect(byRole("idle")).toMatchObject({ deletionTimestamp: null, state: null, existsAtEnd: true });
    expect(byRole("running a job")).toMatchObject({ deletionTimestamp: null, state: "running", existsAtEnd: true });
    expect(outcome.graceEndToDeleteMs).toBeGreaterThanOrEqual(0);
    expect(outcome.graceEndToDeleteMs).toBeLessThan(2000);
    expect(run.stdout).toMatch(/agent: order for arc-runners-x7k2p-runner-c4ncl \(run 9001\): checked against its watch, deleted/);
    expect(run.stdout).toContain("every API call came from system:serviceaccount:arc-reaper-agent:arc-reaper-agent;");
    expect(await liveMembers(outcome.wranglerPid)).toEqual([]);
  });

  it("--agents 2: two clusters, an agent and a token each, one Worker; each job reaped in its own cluster, no order to the other, idle twins untouched", async () => {
    const dir = await mkdtemp(join(tmpdir(), "arc-reaper-demo-agents-test-"));
    dirs.push(dir);
    const result = join(dir, "result.json");
    const run = await runDemo(result, ["--agents", "2"]);
    expect(run.stderr, run.stdout).toBe("");
    expect(run.code, run.stdout).toBe(0);
    const outcome = JSON.parse(await readFile(result, "utf8")) as DemoOutcome;
    expect(outcome.clusters).toEqual([
      {
        name: "eu-west",
        orders: ["arc-runners-x7k2p-runner-h8ng4", "arc-runners-x7k2p-runner-c4ncl"],
        deletes: ["arc-runners-x7k2p-runner-h8ng4", "arc-runners-x7k2p-runner-c4ncl"],
      },
      { name: "us-east", orders: ["arc-runners-x7k2p-runner-us4ea"], deletes: ["arc-runners-x7k2p-runner-us4ea"] },
    ]);
    expect(run.stdout).toContain("the idle twins named arc-runners-x7k2p-runner-1d7e5: eu-west: untouched, us-east: untouched");
    expect(run.stdout).toContain('arc_reaper_agent_connected{cluster="us-east"} 1');
    expect(await liveMembers(outcome.wranglerPid)).toEqual([]);
  });
});
