// The stand-in for node:24.21.0-slim, made offline: the project's pinned Node
// (the npm package `node`, in node_modules), the machine's npm, a shell and the
// few tools the Dockerfiles' RUN lines call, each with the shared libraries ldd
// names, and the machine's CA certificates. Enough to run `npm ci` and
// scripts/server/build.ts as the real base does; not the real base's bytes.
// Where this machine's Node trusts a CA of its own (NODE_EXTRA_CA_CERTS, e.g. a
// TLS-inspecting proxy in front of the npm registry), the stand-in trusts it too,
// so that `npm ci` inside the build reaches the registry as npm here does.
//
// Plain Node (type stripping): erasable TypeScript only.
import { execFileSync } from "node:child_process";
import { chmodSync, cpSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { ROOT } from "../server/build.ts";
import { copyIntoRoot } from "./copy-into-root.ts";
import { scratchImage } from "./scratch-image.ts";

/** The shell and tools the Dockerfiles' RUN lines use (npm runs node scripts; build.ts's case/uname/cp/echo). */
const TOOLS = ["sh", "env", "uname", "cp", "mkdir", "rm", "ls", "cat", "ln", "mv", "chmod"];

/** Where the stand-in keeps the CA file this machine's Node is told to trust (NODE_EXTRA_CA_CERTS). */
const EXTRA_CA = "/usr/local/share/ca-certificates/node-extra-ca.crt";

export function makeStandinNodeBase(name: string): void {
  const extraCa = process.env.NODE_EXTRA_CA_CERTS || undefined;
  const nodeBinary = realpathSync(join(ROOT, "node_modules/node/bin/node"));
  const version = (JSON.parse(readFileSync(join(ROOT, "node_modules/node/package.json"), "utf8")) as { version: string }).version;
  // The npm that runs this script: its package directory (…/npm/bin/npm-cli.js, two levels up).
  const npmCli = realpathSync(execFileSync("sh", ["-c", "command -v npm"], { encoding: "utf8" }).trim());
  const npmDir = dirname(dirname(npmCli));
  const tools = TOOLS.map((t) => realpathSync(execFileSync("sh", ["-c", `command -v ${t}`], { encoding: "utf8" }).trim()));
  scratchImage(
    name,
    (root) => {
      copyIntoRoot(root, [nodeBinary], { to: { [nodeBinary]: "/usr/local/bin/node" } });
      copyIntoRoot(root, tools, { to: Object.fromEntries(tools.map((t, i) => [t, `/usr/bin/${TOOLS[i]}`])) });
      cpSync(npmDir, join(root, "usr/local/lib/node_modules/npm"), { recursive: true, dereference: true });
      symlinkSync("../lib/node_modules/npm/bin/npm-cli.js", join(root, "usr/local/bin/npm"));
      symlinkSync("../lib/node_modules/npm/bin/npx-cli.js", join(root, "usr/local/bin/npx"));
      copyIntoRoot(root, ["/etc/ssl/certs/ca-certificates.crt"]);
      if (extraCa) copyIntoRoot(root, [extraCa], { to: { [extraCa]: EXTRA_CA } });
      writeFileSync(
        join(root, "etc/passwd"),
        "root:x:0:0:root:/root:/bin/sh\nnode:x:1000:1000::/home/node:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
      );
      writeFileSync(join(root, "etc/group"), "root:x:0:\nnode:x:1000:\nnogroup:x:65534:\n");
      for (const [dir, mode] of [
        ["tmp", 0o1777],
        ["root", 0o700],
        ["home/node", 0o755],
      ] as const) {
        mkdirSync(join(root, dir), { recursive: true });
        chmodSync(join(root, dir), mode);
      }
    },
    [
      "--env",
      "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
      "--env",
      `NODE_VERSION=${version}`,
      ...(extraCa ? ["--env", `NODE_EXTRA_CA_CERTS=${EXTRA_CA}`] : []),
      "--cmd",
      "node",
      "--workingdir",
      "/",
    ],
  );
}
