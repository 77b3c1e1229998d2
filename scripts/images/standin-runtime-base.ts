// The stand-in for gcr.io/distroless/base-debian12:nonroot, made offline from
// this machine's Debian packages: glibc (libc6's libraries), libssl and
// libcrypto, the CA certificates, /etc/passwd and /etc/group with root, nobody
// and nonroot (65532), /tmp and /home/nonroot; no shell, no package manager.
// What the server's final stage adds (/app: workerd, the bundle, the config)
// runs on it as on the real base.
//
// Plain Node (type stripping): erasable TypeScript only.
import { execFileSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { copyIntoRoot } from "./copy-into-root.ts";
import { scratchImage } from "./scratch-image.ts";

/** libc6's shared libraries and its loader (its gconv modules and tools left out, as distroless has no use for them). */
function glibcFiles(): string[] {
  return execFileSync("dpkg", ["-L", "libc6"], { encoding: "utf8" })
    .split("\n")
    .filter((p) => /\/(lib|lib64)\/([^/]+\/)?[^/]+\.so(\.\d+)*$/.test(p) && !p.includes("/gconv/") && existsSync(p));
}

/** A library by its soname, where the loader's cache finds it (libssl3 is libssl3t64 on newer Debian and Ubuntu). */
function library(soname: string): string {
  const line = execFileSync("ldconfig", ["-p"], { encoding: "utf8" })
    .split("\n")
    .find((l) => l.trim().startsWith(`${soname} `) && /x86-64|AArch64|aarch64/.test(l));
  const path = line?.split("=>")[1]?.trim();
  if (!path) throw new Error(`${soname} is not installed on this machine (Debian: libssl3)`);
  return path;
}

export function makeStandinRuntimeBase(name: string): void {
  const files = [...glibcFiles(), library("libssl.so.3"), library("libcrypto.so.3"), "/etc/ssl/certs/ca-certificates.crt"];
  scratchImage(
    name,
    (root) => {
      copyIntoRoot(root, files);
      writeFileSync(
        join(root, "etc/passwd"),
        "root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n",
      );
      writeFileSync(join(root, "etc/group"), "root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n");
      for (const [dir, mode] of [
        ["tmp", 0o1777],
        ["root", 0o700],
        ["home/nonroot", 0o700],
      ] as const) {
        mkdirSync(join(root, dir), { recursive: true });
        chmodSync(join(root, dir), mode);
      }
      chownSync(join(root, "home/nonroot"), 65532, 65532);
    },
    [
      "--env",
      "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
      "--env",
      "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt",
      "--user",
      "65532:65532",
      "--workingdir",
      "/home/nonroot",
    ],
  );
}
