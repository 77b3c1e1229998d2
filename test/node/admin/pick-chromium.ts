// Which Chromium the browser tests drive: the system's (/usr/bin/chromium) when
// there is one, otherwise the one inside the npm package @sparticuz/chromium.
import { existsSync } from "node:fs";
import { mkdir, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { ROOT } from "../../../scripts/lib/local-stack.ts";

const SYSTEM_CHROMIUM = "/usr/bin/chromium";
const SYSTEM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/**
 * Which Chromium to drive, and with which flags: /usr/bin/chromium when present,
 * else the packaged one (Linux x64). ARC_REAPER_TEST_CHROMIUM overrides: `package`
 * forces the packaged one, a path names a Chromium or Chrome to use (macOS, arm64).
 */
export async function pickChromium(): Promise<{ executablePath: string; args: string[] }> {
  const override = process.env.ARC_REAPER_TEST_CHROMIUM ?? "";
  if (override !== "" && override !== "package") return { executablePath: override, args: SYSTEM_ARGS };
  if (override !== "package" && existsSync(SYSTEM_CHROMIUM)) return { executablePath: SYSTEM_CHROMIUM, args: SYSTEM_ARGS };
  const { default: packaged } = await import("@sparticuz/chromium");
  // The package unpacks its browser into os.tmpdir() and afterwards reuses
  // whatever "chromium" it finds there. Unpack into a folder of this checkout's
  // own, per package version, and only through a rename once complete, so that
  // neither a stale /tmp/chromium nor a half-written one is ever launched.
  const { version } = JSON.parse(await readFile(join(ROOT, "node_modules/@sparticuz/chromium/package.json"), "utf8")) as { version: string };
  const into = join(ROOT, ".tmp", `sparticuz-chromium-${version}`);
  if (!existsSync(join(into, "chromium"))) {
    const partial = `${into}.partial-${process.pid}`;
    await rm(partial, { recursive: true, force: true });
    await mkdir(partial, { recursive: true });
    await withTmpdir(partial, () => packaged.executablePath());
    await rename(partial, into).catch(async (error: unknown) => {
      if (!existsSync(join(into, "chromium"))) throw error;
      await rm(partial, { recursive: true, force: true }); // another run finished first
    });
  }
  return { executablePath: await withTmpdir(into, () => packaged.executablePath()), args: packaged.args };
}

async function withTmpdir<T>(dir: string, run: () => Promise<T>): Promise<T> {
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = dir;
  try {
    return await run();
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
  }
}
