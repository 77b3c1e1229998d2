// The built agent image started as infra/agent/base/deployment.yaml runs it,
// far enough to show it starts: its own entrypoint from its root filesystem
// (scripts/images/run-in-rootfs.ts: uid 1000, no capabilities, read-only root),
// the in-cluster Kubernetes configuration (KUBERNETES_SERVICE_HOST and the
// ServiceAccount's files), and its probe /livez answering 200. The Worker it
// would connect to is a closed port here: it keeps retrying, which is all a
// start needs. Also checks that the image holds no TypeScript (the agent
// never loads it; the Dockerfile's `npm ci` leaves it out).
//
// Plain Node (type stripping): erasable TypeScript only.
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, waitFor } from "../lib/local-stack.ts";
import { imageRootfs } from "./image-rootfs.ts";
import { processStatus, type ProcessStatus } from "./process-status.ts";
import { runInRootfs } from "./run-in-rootfs.ts";
import { stopRun } from "./stop-run.ts";

const SERVICE_ACCOUNT = "/var/run/secrets/kubernetes.io/serviceaccount";

export interface AgentStart {
  /** From starting the entrypoint to /livez answering 200. */
  liveMs: number;
  process: ProcessStatus;
}

export async function startAgentImage(image: string): Promise<AgentStart> {
  const work = mkdtempSync(join(tmpdir(), "arc-reaper-agent-run-"));
  const rootfs = imageRootfs(image, [SERVICE_ACCOUNT, "/tmp", "/dev", "/proc"]);
  let child: ChildProcess | undefined;
  const output: string[] = [];
  try {
    const workdir = rootfs.config.WorkingDir ?? "/";
    for (const p of ["node_modules/typescript", "node_modules/@typescript"]) {
      if (existsSync(join(rootfs.root, workdir, p))) throw new Error(`the agent image holds ${join(workdir, p)}: the agent never loads it`);
    }
    const serviceAccount = join(work, "service-account");
    mkdirSync(serviceAccount);
    writeFileSync(join(serviceAccount, "token"), "image-check-token");
    writeFileSync(join(serviceAccount, "namespace"), "arc-reaper");
    const firstCa = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n/.exec(readFileSync("/etc/ssl/certs/ca-certificates.crt", "utf8"))?.[0];
    writeFileSync(join(serviceAccount, "ca.crt"), firstCa ?? "");
    const [healthPort, closedPort] = await Promise.all([freePort(), freePort()]);
    const imageEnv = Object.fromEntries((rootfs.config.Env ?? []).map((e) => [e.slice(0, e.indexOf("=")), e.slice(e.indexOf("=") + 1)]));
    const entrypoint = [...(rootfs.config.Entrypoint ?? []), ...(rootfs.config.Cmd ?? [])];
    // coreutils chroot runs the program from /: the image's working directory is where its entrypoint's relative path starts.
    const argv = ["/bin/sh", "-c", `cd "$0" && exec "$@"`, workdir, ...entrypoint];
    const started = Date.now();
    child = runInRootfs({
      root: rootfs.root,
      user: "1000:1000",
      argv,
      env: {
        ...imageEnv,
        ARC_REAPER_URL: `http://127.0.0.1:${closedPort}`,
        AGENT_TOKEN: "image-check-token-of-at-least-32-characters",
        AGENT_CLUSTER: "image-check",
        REAPER_NAMESPACES: "arc-runners",
        AGENT_HEALTH_PORT: String(healthPort),
        KUBERNETES_SERVICE_HOST: "127.0.0.1",
        KUBERNETES_SERVICE_PORT: String(closedPort),
      },
      volumes: [{ host: serviceAccount, path: SERVICE_ACCOUNT, readOnly: true }],
    });
    // The program's end stops every wait below at once (waitFor alone would retry until its timeout).
    const ended = new Promise<never>((_, reject) => child?.once("exit", (code, signal) => reject(new Error(`the agent exited (exit ${code ?? signal})`))));
    ended.catch(() => {});
    for (const stream of [child.stdout, child.stderr]) {
      stream?.setEncoding("utf8");
      stream?.on("data", (chunk: string) => output.push(...chunk.split("\n").filter((l) => l !== "")));
    }
    await Promise.race([
      ended,
      waitFor(
        "the agent image's /livez to answer 200",
        async () => {
          const res = await fetch(`http://127.0.0.1:${healthPort}/livez`, { signal: AbortSignal.timeout(2_000) });
          await res.arrayBuffer();
          if (res.status !== 200) throw new Error(`/livez answered ${res.status}`);
          return true;
        },
        30_000,
        50,
      ),
    ]);
    const liveMs = Date.now() - started;
    const proc = processStatus(child.pid ?? 0);
    if (proc.uid !== "1000" || !/^0+$/.test(proc.capEff) || !proc.rootReadOnly) {
      throw new Error(`the agent runs as uid ${proc.uid}, CapEff ${proc.capEff}, root read-only ${proc.rootReadOnly}: not as the pod runs it`);
    }
    return { liveMs, process: proc };
  } catch (e) {
    const tail = output.slice(-20).join("\n");
    throw new Error(`${(e as Error).message}${tail ? `\nthe agent's last lines:\n${tail}` : ""}`);
  } finally {
    await stopRun(child);
    rootfs.remove();
    rmSync(work, { recursive: true, force: true });
  }
}
