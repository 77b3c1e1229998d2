// npm run agent: the in-cluster agent. Settings from the environment (see
// settings.ts); the in-cluster Kubernetes configuration, or KUBECONFIG outside
// a cluster (kube-config.ts, which also says where HTTPS_PROXY applies). Stops cleanly on SIGTERM and SIGINT.
import type { KubeConfig } from "@kubernetes/client-node";
import { startAgent } from "./agent.ts";
import { startHealthServer, type HealthServer } from "./health-server.ts";
import { errorText } from "../model/error-text.ts";
import { kubeConfig } from "./kube-config.ts";
import { jsonLog } from "./log.ts";
import { readSettings } from "./settings.ts";

const log = jsonLog();
const result = readSettings(process.env);
if (!result.ok) {
  for (const problem of result.problems) log("error", "bad setting", { problem });
  process.stderr.write(`arc-reaper agent: bad settings:\n${result.problems.map((p) => `  - ${p}`).join("\n")}\n`);
  process.exit(2);
}

let kc: KubeConfig;
try {
  kc = kubeConfig(process.env, result.settings.proxy);
} catch (e) {
  log("error", "no Kubernetes configuration", { error: errorText(e) });
  process.exit(2);
}

const agent = startAgent({ settings: result.settings, kubeConfig: kc, log });
// The probes' port taken is said, not fatal: the agent still reaps; the kubelet's liveness probe then restarts it.
let health: HealthServer | undefined;
startHealthServer({ port: result.settings.healthPort, notReady: () => agent.notReady() }).then(
  (h) => {
    health = h;
    log("info", "probes listening", { port: h.port, paths: ["/livez", "/readyz"] });
  },
  (e: unknown) => log("error", "the probes could not listen: /livez and /readyz will fail", { port: result.settings.healthPort, error: errorText(e) }),
);
let stopping = false;
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    log("info", "stopping", { signal });
    Promise.all([agent.stop(), health?.close()]).then(
      () => process.exit(0),
      (e: unknown) => {
        log("error", "stop failed", { error: errorText(e) });
        process.exit(1);
      },
    );
  });
}
