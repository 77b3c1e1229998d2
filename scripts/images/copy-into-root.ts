// Host files into a stand-in image's root filesystem, each at its own path,
// with the shared libraries it loads (ldd).
//
// Plain Node (type stripping): erasable TypeScript only.
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, realpathSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { parseLdd } from "./parse-ldd.ts";

/**
 * Copies each of `files` (absolute host paths; symbolic links followed) to the
 * same path under `root`, and for each dynamically linked one the libraries
 * ldd names, at the paths ldd names them by (the loader finds them there).
 * Returns every path written, relative to the root.
 */
export function copyIntoRoot(root: string, files: string[], opts: { to?: Record<string, string> } = {}): string[] {
  const written = new Set<string>();
  const put = (from: string, to: string): void => {
    if (written.has(to)) return;
    const target = join(root, to);
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(realpathSync(from), target);
    written.add(to);
  };
  for (const file of files) {
    put(file, opts.to?.[file] ?? file);
    if ((statSync(file).mode & 0o111) === 0) continue;
    let ldd = "";
    try {
      ldd = execFileSync("ldd", [file], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    } catch (e) {
      // "not a dynamic executable": a script or a static binary needs nothing more.
      if (/not a dynamic executable/.test(String((e as { stderr?: string }).stderr ?? ""))) continue;
      throw e;
    }
    for (const lib of parseLdd(ldd)) put(lib, lib);
  }
  return [...written];
}
