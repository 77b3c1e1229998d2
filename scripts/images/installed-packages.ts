// What `npm ci --omit=…` installs from a lock file, without installing: npm's
// rule on the lock's flags (a package is left out when every path to it is an
// omitted kind). The agent's image is checked with it (test/node/agent/
// agent-dockerfile.test.ts: no TypeScript), with the Dockerfile's own flags.
//
// Plain Node (type stripping): erasable TypeScript only.

interface LockedPackage {
  dev?: boolean;
  optional?: boolean;
  devOptional?: boolean;
  peer?: boolean;
}

export type Omitted = "dev" | "optional" | "peer";

/**
 * The installed packages' paths (e.g. "node_modules/typescript"), as npm ci
 * lays them out from `lock` (lockfileVersion 2 or 3) with `omit`: left out
 * when dev and dev is omitted, optional and optional is, dev-or-optional
 * (devOptional) and both are, or peer and peer is.
 */
export function installedPackages(lock: { packages?: Record<string, LockedPackage> }, omit: readonly Omitted[]): string[] {
  if (!lock.packages) throw new Error("the lock file has no `packages` (lockfileVersion 2 or later is needed)");
  const o = new Set(omit);
  return Object.entries(lock.packages)
    .filter(([path]) => path !== "")
    .filter(
      ([, p]) =>
        !((p.dev && o.has("dev")) || (p.optional && o.has("optional")) || (p.devOptional && o.has("dev") && o.has("optional")) || (p.peer && o.has("peer"))),
    )
    .map(([path]) => path);
}
