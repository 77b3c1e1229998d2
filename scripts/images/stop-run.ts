// The end of an image's run, however it went: the process stopped (SIGTERM,
// then SIGKILL after 5 s) before its root filesystem is unmounted and removed.
import type { ChildProcess } from "node:child_process";

export async function stopRun(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
  await gone;
  clearTimeout(timer);
}
