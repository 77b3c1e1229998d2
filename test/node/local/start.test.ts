// npm start without a .dev.vars: the Worker on the stand-ins, a busy runner, and
// signed sample webhooks on Enter that the Worker accepts and records; the admin
// listing then shows the runner's job over. Ctrl-C stops it all.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { ROOT } from "../../../scripts/lib/local-stack.ts";

it.skipIf(existsSync(join(ROOT, ".dev.vars")))(
  "starts on the stand-ins and sends signed sample webhooks on Enter",
  async () => {
    const child = spawn(process.execPath, [join(ROOT, "scripts/start.ts")], {
      cwd: ROOT,
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" },
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString("utf8")));
    child.stderr.on("data", (d: Buffer) => (out += d.toString("utf8")));
    const exited = new Promise<number>((resolve) => child.on("close", (code) => resolve(code ?? 130)));
    const waitFor = async (re: RegExp, ms: number) => {
      const deadline = Date.now() + ms;
      for (;;) {
        const m = re.exec(out);
        if (m) return m;
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`no ${re} in npm start's output:\n${out}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    try {
      const [, url, token] = (await waitFor(/Worker: +(http:\/\/127\.0\.0\.1:\d+) \(admin page \S+, token (\S+)\)/, 90_000)) as unknown as string[];
      await waitFor(/Enter sends the next signed sample webhook/, 5_000);
      child.stdin.write("\n");
      await waitFor(/sent workflow_job\.in_progress .*: 2\d\d /, 30_000);
      child.stdin.write("\n");
      await waitFor(/sent workflow_job\.completed .*: 2\d\d /, 30_000);
      const rows = (await (await fetch(`${url}/admin/runners`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
        runners: { runner?: string; name?: string; state: string }[];
      };
      expect(rows.runners).toEqual([expect.objectContaining({ state: "finished" })]);
    } finally {
      if (child.pid) process.kill(-child.pid, "SIGINT");
    }
    expect(await exited).toBe(130);
  },
  150_000,
);
