// The agent as operators run it: `node src/agent/main.ts` (npm run agent) with
// settings from the environment and KUBECONFIG, as a child process. Bad settings
// stop it with each one named and the token never echoed; good ones connect,
// apply an order, and SIGTERM ends it cleanly; HTTP_PROXY and NO_PROXY from its
// environment route the ledger's WebSocket through a proxy and keep the API server off it.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createKubeTenant, makeEphemeralRunner } from "../../standins/kube/control.ts";
import { startKubeStandin, type KubeStandin } from "../../standins/kube/server.ts";
import { loadAgentRbac } from "./agent-rbac.ts";
import { LedgerStandin, waitFor } from "./agent-ledger-standin.ts";
import { startConnectProxy } from "./connect-proxy.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const GOOD_TOKEN = "agent-main-test-token-0123456789-abcdefghijkl";

interface Run {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exit: Promise<number | null>;
}

const children: ChildProcess[] = [];
function runMain(env: Record<string, string>): Run {
  const child = spawn(process.execPath, ["src/agent/main.ts"], {
    cwd: ROOT,
    env: { PATH: process.env["PATH"] ?? "", HOME: tmpdir(), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let out = "";
  let err = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString("utf8")));
  child.stderr?.on("data", (d: Buffer) => (err += d.toString("utf8")));
  const exit = new Promise<number | null>((res) => child.once("exit", (code) => res(code)));
  return { child, stdout: () => out, stderr: () => err, exit };
}

afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
});

describe("node src/agent/main.ts", () => {
  let standin: KubeStandin;
  let dir: string;
  beforeAll(async () => {
    standin = await startKubeStandin();
    dir = mkdtempSync(join(tmpdir(), "agent-main-"));
  });
  afterAll(async () => {
    await standin.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("exits non-zero naming every bad setting, without echoing the token", async () => {
    const secret = "tooshort-secret-value";
    const run = runMain({ ARC_REAPER_URL: "http://example.com", AGENT_TOKEN: secret, REAPER_NAMESPACES: "Bad_NS", AGENT_DRY_RUN: "maybe" });
    expect(await run.exit).toBe(2);
    const all = run.stdout() + run.stderr();
    for (const name of ["ARC_REAPER_URL", "AGENT_TOKEN", "REAPER_NAMESPACES", "AGENT_DRY_RUN"]) expect(all).toContain(name);
    expect(all).not.toContain(secret);
    for (const line of run.stdout().trim().split("\n")) expect(() => JSON.parse(line) as unknown).not.toThrow();
  });

  it("with KUBECONFIG: connects, sends hello and a snapshot, applies an order, and stops on SIGTERM with exit 0", async () => {
    const tenant = await createKubeTenant(standin.url, { namespaces: ["arc-runners"] });
    const rbac = loadAgentRbac("arc-runners");
    const saToken = "agent-main-serviceaccount-token-0123456789";
    await tenant.addServiceAccount({ ...rbac.serviceAccount, token: saToken, bindings: rbac.bindings });
    const seeded = await tenant.seed(makeEphemeralRunner({ namespace: "arc-runners", scaleSet: "arc-runners", name: "child-run", workflowRunId: 321 }));
    const kubeconfig = join(dir, "kubeconfig.json");
    writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{ name: "standin", cluster: { server: tenant.baseUrl, "insecure-skip-tls-verify": true } }],
        users: [{ name: "agent", user: { token: saToken } }],
        contexts: [{ name: "standin", context: { cluster: "standin", user: "agent" } }],
        "current-context": "standin",
      }),
    );
    const ledger = await new LedgerStandin(GOOD_TOKEN).listen();
    try {
      const run = runMain({
        KUBECONFIG: kubeconfig,
        ARC_REAPER_URL: ledger.url,
        AGENT_TOKEN: GOOD_TOKEN,
        REAPER_NAMESPACES: "arc-runners",
        AGENT_DRY_RUN: "false",
        AGENT_HEALTH_PORT: "0",
      });
      const conn = await waitFor(
        "hello and snapshot from the child",
        () => {
          const c = ledger.connections[0];
          return c?.messages.some((m) => m.type === "snapshot") ? c : undefined;
        },
        20_000,
      ).catch((e: unknown) => {
        throw new Error(`${String(e)}\nstdout:\n${run.stdout()}\nstderr:\n${run.stderr()}`);
      });
      expect(conn.messages[0]).toMatchObject({ type: "hello", namespaces: ["arc-runners"], dryRun: false });
      expect(conn.messages[1]).toMatchObject({
        type: "snapshot",
        runners: [expect.objectContaining({ name: "child-run", uid: seeded.metadata.uid, workflowRunId: 321 })],
      });
      // The probes: live, and ready once connected with its whole view sent.
      const port = await waitFor(
        "the probes' port",
        () => {
          const line = run
            .stdout()
            .split("\n")
            .find((l) => l.includes('"probes listening"'));
          return line ? (JSON.parse(line) as { port: number }).port : undefined;
        },
        10_000,
      );
      const probe = async (path: string) => {
        const res = await fetch(`http://127.0.0.1:${port}${path}`);
        return [res.status, (await res.text()).trim()];
      };
      expect(await probe("/livez")).toEqual([200, "ok"]);
      expect(await probe("/readyz")).toEqual([200, "ready: connected to the ledger, snapshot sent"]);
      expect((await probe("/metrics"))[0]).toBe(404);
      ledger.order({ id: "child-1", namespace: "arc-runners", name: "child-run", uid: seeded.metadata.uid, runId: 321, reason: "run 321 completed" });
      const rep = await waitFor("the report", () => conn.messages.find((m) => m.type === "report"), 10_000);
      expect(rep).toMatchObject({ id: "child-1", outcome: "deleted" });
      run.child.kill("SIGTERM");
      expect(await run.exit).toBe(0);
      const lines = run
        .stdout()
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { msg: string; level: string });
      expect(lines.map((l) => l.msg)).toEqual(
        expect.arrayContaining(["agent starting", "connected to the ledger", "snapshot sent", "order", "stopping", "agent stopped"]),
      );
      expect(run.stdout() + run.stderr()).not.toContain(GOOD_TOKEN);
      expect(run.stdout() + run.stderr()).not.toContain(saToken);
      await tenant.dispose();
    } finally {
      await ledger.close();
    }
  });

  it("behind a proxy: the WebSocket to the ledger goes through it, the API server that NO_PROXY names does not", async () => {
    const tenant = await createKubeTenant(standin.url, { namespaces: ["arc-runners"] });
    const rbac = loadAgentRbac("arc-runners");
    const saToken = "agent-main-proxy-serviceaccount-token-0123456789";
    await tenant.addServiceAccount({ ...rbac.serviceAccount, token: saToken, bindings: rbac.bindings });
    const kubeconfig = join(dir, "kubeconfig-proxy.json");
    writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{ name: "standin", cluster: { server: tenant.baseUrl, "insecure-skip-tls-verify": true } }],
        users: [{ name: "agent", user: { token: saToken } }],
        contexts: [{ name: "standin", context: { cluster: "standin", user: "agent" } }],
        "current-context": "standin",
      }),
    );
    const ledger = await new LedgerStandin(GOOD_TOKEN).listen();
    const proxy = await startConnectProxy();
    try {
      const run = runMain({
        KUBECONFIG: kubeconfig,
        ARC_REAPER_URL: ledger.url,
        AGENT_TOKEN: GOOD_TOKEN,
        REAPER_NAMESPACES: "arc-runners",
        AGENT_HEALTH_PORT: "0",
        http_proxy: proxy.url,
        // The API server by host and port: the ledger, on the same host, is not named.
        NO_PROXY: new URL(tenant.baseUrl).host,
      });
      await waitFor("a snapshot through the proxy", () => ledger.connections[0]?.messages.some((m) => m.type === "snapshot") || undefined, 20_000).catch(
        (e: unknown) => {
          throw new Error(`${String(e)}\nstdout:\n${run.stdout()}\nstderr:\n${run.stderr()}`);
        },
      );
      expect(proxy.tunnels).toEqual([new URL(ledger.url).host]);
      expect(run.stdout()).toContain(`"via":"${proxy.url}"`);
      run.child.kill("SIGTERM");
      expect(await run.exit).toBe(0);
      await tenant.dispose();
    } finally {
      await proxy.close();
      await ledger.close();
    }
  });
});
