// npm ci's omit rule on a lock file's flags (scripts/images/installed-packages.ts).
import { describe, expect, it } from "vitest";
import { installedPackages } from "../../../scripts/images/installed-packages.ts";

const lock = {
  packages: {
    "": {},
    "node_modules/hono": {},
    "node_modules/vitest": { dev: true },
    // A devDependency that is also a production package's optional peer (valibot → typescript).
    "node_modules/typescript": { devOptional: true },
    "node_modules/@typescript/typescript-linux-x64": { optional: true },
    "node_modules/some-peer": { peer: true },
  },
};

describe("installedPackages", () => {
  it("leaves out each omitted kind, and dev-or-optional only when both are omitted", () => {
    expect(installedPackages(lock, [])).toHaveLength(5);
    expect(installedPackages(lock, ["dev"])).toEqual([
      "node_modules/hono",
      "node_modules/typescript",
      "node_modules/@typescript/typescript-linux-x64",
      "node_modules/some-peer",
    ]);
    expect(installedPackages(lock, ["dev", "peer"])).toEqual(["node_modules/hono", "node_modules/typescript", "node_modules/@typescript/typescript-linux-x64"]);
    expect(installedPackages(lock, ["optional"])).toEqual(["node_modules/hono", "node_modules/vitest", "node_modules/typescript", "node_modules/some-peer"]);
    expect(installedPackages(lock, ["dev", "optional"])).toEqual(["node_modules/hono", "node_modules/some-peer"]);
  });

  it("refuses a lock file without `packages` (lockfileVersion 1)", () => {
    expect(() => installedPackages({}, ["dev"])).toThrow(/lockfileVersion 2/);
  });
});
