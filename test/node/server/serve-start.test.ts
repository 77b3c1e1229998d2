// `npm run serve` at start: --help says what it reads, an unknown flag is named
// (no stack trace), and missing or invalid settings are listed by name with
// exit 2 before workerd runs; with settings that pass, it gets as far as workerd.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../../../scripts/server/build.ts";
import { settingsProblems } from "../../../scripts/server/serve.ts";

/** serve.ts run as `npm run serve` runs it, with only `env` (and PATH): its exit code and output. */
function serve(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, "scripts/server/serve.ts"), ...args], {
      env: { PATH: process.env.PATH, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString("utf8")));
    child.stderr.on("data", (d: Buffer) => (out += d.toString("utf8")));
    child.on("exit", (code) => resolve({ code, out }));
  });
}

describe("npm run serve, at start", () => {
  it("--help says what it reads: the port, the address, the ledger's directory, the token file", async () => {
    const { code, out } = await serve(["--help"], {});
    expect(code).toBe(0);
    for (const word of ["--no-build", "PORT", "default 8080", "ARC_REAPER_LISTEN", "ARC_REAPER_DATA", "ARC_REAPER_SERVICE_ACCOUNT", "first request"])
      expect(out).toContain(word);
  });

  it("names an unknown flag and exits 2, without a stack trace", async () => {
    const { code, out } = await serve(["--port", "1"], {});
    expect(code).toBe(2);
    expect(out).toMatch(/serve: Unknown option '--port'/);
    expect(out).not.toMatch(/\n\s+at /);
  });

  it("lists every missing setting by name and exits 2 before workerd runs", async () => {
    const { code, out } = await serve(["--no-build"], {});
    expect(code).toBe(2);
    for (const name of ["GITHUB_WEBHOOK_SECRET", "GITHUB_APP_ID", "GITHUB_APP_PRIVATE_KEY", "KUBE_API_URL", "KUBE_TOKEN", "REAPER_NAMESPACES", "ADMIN_TOKEN"])
      expect(out).toMatch(new RegExp(`^  - ${name} is missing`, "m"));
    expect(out).not.toContain("arc-reaper on http://");
  });

  it("names an invalid value, and passes settings the Worker accepts", () => {
    const good = {
      GITHUB_WEBHOOK_SECRET: "x".repeat(32),
      GITHUB_APP_ID: "123",
      GITHUB_APP_PRIVATE_KEY: "-----BEGIN RSA PRIVATE KEY-----\nMII\n-----END RSA PRIVATE KEY-----",
      KUBE_API_URL: "https://kubernetes.default.svc",
      KUBE_TOKEN: "service-account-token-file",
      REAPER_NAMESPACES: "arc-runners",
      ADMIN_TOKEN: "a".repeat(32),
    };
    expect(settingsProblems(good)).toEqual([]);
    expect(settingsProblems({ ...good, REAPER_GRACE_SECONDS: "soon" }).join("\n")).toMatch(/REAPER_GRACE_SECONDS/);
  });
});
