// The built server image run as infra/server/base/deployment.yaml runs it, and
// shown to reap: its own entrypoint from its root filesystem (scripts/images/
// run-in-rootfs.ts: uid 65532, no capabilities, read-only root, the ledger's
// volume, the projected ServiceAccount token and ca.crt, a 16 MiB /tmp), its
// settings the ConfigMap's (infra/server/base/settings.env) with the Secret's
// and the stand-ins' addresses over them, against the project's GitHub and
// Kubernetes API stand-ins over HTTP. A runner's job is sent in progress, then
// completed, as signed workflow_job webhooks; the proof is the stand-in API
// server receiving the DELETE of that EphemeralRunner.
//
// Plain Node (type stripping): erasable TypeScript only.
import type { ChildProcess } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Webhooks } from "@octokit/webhooks";
import { startGithubStandin } from "../../test/standins/github/server.ts";
import { createGithubTenant } from "../../test/standins/github/control.ts";
import { startKubeStandin } from "../../test/standins/kube/server.ts";
import { createKubeTenant, makeEphemeralRunner, identityBinding, roleBindings } from "../../test/standins/kube/control.ts";
import { waitFor, workflowJobPayload } from "../lib/local-stack.ts";
import { ROOT } from "../server/build.ts";
import { imageRootfs } from "./image-rootfs.ts";
import { processStatus, type ProcessStatus } from "./process-status.ts";
import { runInRootfs } from "./run-in-rootfs.ts";
import { stopRun } from "./stop-run.ts";

const NAMESPACE = "arc-runners";
const REPO = "octo-org/octo-repo";
const INSTALLATION = 4242;
const UID = 65532;
const LEDGER = "/var/lib/arc-reaper";
const SERVICE_ACCOUNT = "/var/run/secrets/kubernetes.io/serviceaccount";
const PORT = 8080;

export interface ServerProof {
  /** From starting the entrypoint to /healthz answering 200. */
  readyMs: number;
  /** From sending the completed job's webhook to the stand-in API server's DELETE of its runner. */
  webhookToDeleteMs: number;
  /** How the running process was confined (/proc/<pid>). */
  process: ProcessStatus;
}

/** Whether the pod's port is free on this machine (the image listens on *:8080 as in the pod). */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once("error", () => resolve(false));
    s.listen(port, () => s.close(() => resolve(true)));
  });
}

export async function proveServerImage(image: string): Promise<ServerProof> {
  const work = mkdtempSync(join(tmpdir(), "arc-reaper-image-run-"));
  const [githubStandin, kubeStandin] = await Promise.all([startGithubStandin(), startKubeStandin()]);
  const rootfs = imageRootfs(image, [LEDGER, SERVICE_ACCOUNT, "/tmp", "/dev", "/proc"]);
  let child: ChildProcess | undefined;
  const output: string[] = [];
  try {
    const github = await createGithubTenant(githubStandin.url);
    await github.addInstallation({ id: INSTALLATION, repositories: [REPO] });
    const kube = await createKubeTenant(kubeStandin.url, { namespaces: [NAMESPACE] });
    const kubeToken = `image-kube-${randomBytes(18).toString("base64url")}`;
    await kube.addServiceAccount({
      name: "arc-reaper",
      namespace: "arc-reaper",
      token: kubeToken,
      bindings: [...roleBindings([NAMESPACE]), identityBinding()],
    });
    const webhookSecret = `image-webhook-${randomBytes(18).toString("base64url")}`;

    // The volumes: the ledger's (fsGroup 65532 makes it the pod's), the projected token and ca.crt (read-only).
    const ledger = join(work, "ledger");
    mkdirSync(ledger);
    chownSync(ledger, UID, UID);
    chmodSync(ledger, 0o770);
    const serviceAccount = join(work, "service-account");
    mkdirSync(serviceAccount);
    writeFileSync(join(serviceAccount, "token"), kubeToken, { mode: 0o640 });
    chownSync(join(serviceAccount, "token"), 0, UID);
    // The stand-in API server is plain HTTP: any valid certificate will do for the config's embedded CA.
    const firstCa = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n/.exec(readFileSync("/etc/ssl/certs/ca-certificates.crt", "utf8"))?.[0];
    writeFileSync(join(serviceAccount, "ca.crt"), firstCa ?? "");

    // The ConfigMap's settings (settings.env as kustomize's configMapGenerator reads it: KEY=value lines, `#` lines
    // skipped), the Secret's, and what points at the stand-ins and makes the proof quick.
    const configMap = Object.fromEntries(
      readFileSync(join(ROOT, "infra/server/base/settings.env"), "utf8")
        .split(/\r?\n/)
        .map((l) => l.trimStart())
        .filter((l) => l !== "" && !l.startsWith("#"))
        .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
    );
    const settings: Record<string, string> = {
      ...configMap,
      GITHUB_APP_ID: String(github.appId),
      GITHUB_API_URL: github.baseUrl,
      KUBE_API_URL: kube.baseUrl,
      REAPER_NAMESPACES: NAMESPACE,
      REAPER_DRY_RUN: "false",
      REAPER_GRACE_SECONDS: "0",
      GITHUB_WEBHOOK_SECRET: webhookSecret,
      GITHUB_APP_PRIVATE_KEY: github.privateKeyPkcs1.trim(),
      ADMIN_TOKEN: `image-admin-${randomBytes(18).toString("base64url")}`,
    };
    const imageEnv = Object.fromEntries((rootfs.config.Env ?? []).map((e) => [e.slice(0, e.indexOf("=")), e.slice(e.indexOf("=") + 1)]));
    const entrypoint = [...(rootfs.config.Entrypoint ?? []), ...(rootfs.config.Cmd ?? [])];
    if (entrypoint.length === 0) throw new Error(`${image} has no entrypoint`);
    // As in the pod: *:8080. Where another program holds 8080 here, the socket is moved (workerd's -s), nothing else.
    let port = PORT;
    const argv = [...entrypoint];
    if (!(await portFree(PORT))) {
      port = 18080 + Math.floor(Math.random() * 1000);
      argv.push("-s", `http=127.0.0.1:${port}`);
      process.stderr.write(`port ${PORT} is taken on this machine: the server listens on ${port} instead\n`);
    }
    const started = Date.now();
    child = runInRootfs({
      root: rootfs.root,
      user: `${UID}:${UID}`,
      argv,
      env: { ...imageEnv, ...settings },
      volumes: [
        { host: ledger, path: LEDGER, readOnly: false },
        { host: serviceAccount, path: SERVICE_ACCOUNT, readOnly: true },
      ],
    });
    // The program's end stops every wait below at once (waitFor alone would retry until its timeout).
    const ended = new Promise<never>((_, reject) => child?.once("exit", (code, signal) => reject(new Error(`the server exited (exit ${code ?? signal})`))));
    ended.catch(() => {});
    for (const stream of [child.stdout, child.stderr]) {
      stream?.setEncoding("utf8");
      stream?.on("data", (chunk: string) => output.push(...chunk.split("\n").filter((l) => l !== "")));
    }
    const url = `http://127.0.0.1:${port}`;
    await Promise.race([
      ended,
      waitFor(
        "the server image's /healthz to answer 200",
        async () => {
          const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2_000) });
          await res.arrayBuffer();
          if (res.status !== 200) throw new Error(`/healthz answered ${res.status}`);
          return true;
        },
        30_000,
        50,
      ),
    ]);
    const readyMs = Date.now() - started;
    const pid = child.pid ?? 0;
    const proc = processStatus(pid);
    if (proc.uid !== String(UID) || !/^0+$/.test(proc.capEff) || !/^0+$/.test(proc.capPrm) || !proc.rootReadOnly) {
      throw new Error(
        `the server runs as uid ${proc.uid}, CapEff ${proc.capEff}, CapPrm ${proc.capPrm}, root read-only ${proc.rootReadOnly}: not as the pod runs it`,
      );
    }

    // A busy runner, its job in progress, then completed: signed as GitHub signs.
    const runId = 9100;
    const name = `arc-runners-image-runner-${runId}`;
    const iso = (msAgo: number) => new Date(Date.now() - msAgo).toISOString();
    await kube.seed(
      makeEphemeralRunner({
        namespace: NAMESPACE,
        scaleSet: "arc-runners",
        name,
        workflowRunId: runId,
        jobRepositoryName: REPO,
        creationTimestamp: iso(600_000),
      }),
    );
    const webhooks = new Webhooks({ secret: webhookSecret });
    const post = async (payload: unknown): Promise<void> => {
      const body = JSON.stringify(payload);
      const res = await fetch(`${url}/webhook`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-github-event": "workflow_job",
          "x-github-delivery": randomUUID(),
          "x-hub-signature-256": await webhooks.sign(body),
        },
        body,
      });
      if (res.status >= 300) throw new Error(`the webhook was answered ${res.status}: ${await res.text()}`);
    };
    const job = { runner: name, repo: REPO, runId, runAttempt: 1, jobId: runId * 10, installationId: INSTALLATION, startedAt: iso(60_000) };
    await post(workflowJobPayload("in_progress", job));
    const sent = Date.now();
    await post(workflowJobPayload("completed", { ...job, completedAt: iso(0), conclusion: "success" }));
    const deleted = await Promise.race([
      ended,
      waitFor(
        `the stand-in API server to receive the DELETE of EphemeralRunner ${name}`,
        async () => {
          return (await kube.calls()).find((c) => c.method === "DELETE" && c.path.endsWith(`/ephemeralrunners/${name}`) && c.status < 300);
        },
        20_000,
        20,
      ),
    ]);
    return { readyMs, webhookToDeleteMs: Date.parse(deleted.time) - sent, process: proc };
  } catch (e) {
    const tail = output.slice(-20).join("\n");
    throw new Error(`${(e as Error).message}${tail ? `\nthe server's last lines:\n${tail}` : ""}`);
  } finally {
    await stopRun(child);
    rootfs.remove();
    await Promise.all([githubStandin.close(), kubeStandin.close()]);
    rmSync(work, { recursive: true, force: true });
  }
}
