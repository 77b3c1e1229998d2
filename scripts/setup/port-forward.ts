// A `kubectl port-forward` to the server's Service that setup starts and stops
// itself: the health check's admin token then goes only to 127.0.0.1, through
// the API server kubectl already trusts, and nobody has to start a tunnel by hand.
import { spawn } from "node:child_process";
import type { Kubectl } from "./kubectl.ts";

export interface PortForward {
  /** http://127.0.0.1:PORT, the Service's port 80 on this machine. */
  url: string;
  stop(): void;
}

const FORWARDING = /Forwarding from 127\.0\.0\.1:(\d+)/;

/** Starts the forward to svc/arc-reaper in `namespace` on a free local port; rejects with kubectl's words if it does not start within `ms`. */
export function startPortForward(k: Kubectl, namespace: string, ms = 30_000): Promise<PortForward> {
  const child = spawn("kubectl", ["--context", k.context, "-n", namespace, "port-forward", "svc/arc-reaper", ":80"], {
    cwd: k.root,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const stop = () => {
    if (child.exitCode === null) child.kill();
  };
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`kubectl port-forward svc/arc-reaper did not start within ${ms / 1000} s:\n${out.trim()}`));
    }, ms);
    const seen = (d: Buffer) => {
      out += d.toString("utf8");
      const m = FORWARDING.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ url: `http://127.0.0.1:${m[1]}`, stop });
      }
    };
    child.stdout.on("data", seen);
    child.stderr.on("data", seen);
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(new Error(`kubectl port-forward could not start: ${e.message}`, { cause: e }));
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`kubectl port-forward svc/arc-reaper ended (exit ${code}) before forwarding:\n${out.trim()}`));
    });
  });
}
