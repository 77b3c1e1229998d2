// A user's overlay (infra/examples/*) as a test renders it: copied to a scratch
// directory with every base it takes by URL at a tag pointed at this checkout's
// files at the same path (kubectl is offline here), and every such URL returned
// so a test can check the repository and tag each names.
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { listYamlFiles } from "./infra-rbac.ts";

/** A resource of arc-reaper by URL at a tag, as a user's overlay names it. */
const REMOTE = /https:\/\/github\.com\/([^/]+\/[^/]+)\/\/([^?\s]+)\?ref=(\S+)/g;

export interface RemoteBase {
  repository: string;
  path: string;
  ref: string;
}

/** Copies `example` to `dir` with its remote bases pointed at `root`'s files; answers the remotes it named. */
export function localOverlayCopy(example: string, dir: string, root: string): RemoteBase[] {
  cpSync(example, dir, { recursive: true });
  const remotes: RemoteBase[] = [];
  for (const file of listYamlFiles(dir)) {
    const text = readFileSync(file, "utf8");
    // kustomize refuses absolute paths for bases: a path relative to the file's directory.
    const local = text.replace(REMOTE, (_m, repository: string, path: string, ref: string) => {
      remotes.push({ repository, path, ref });
      return relative(dirname(file), join(root, path));
    });
    writeFileSync(file, local);
  }
  return remotes;
}
