// An overlay names arc-reaper's bases by URL at a release tag (what a user
// commits). Rendering it here needs no network: every such URL in the
// overlay's YAML files is pointed at this checkout's file at the same path
// (relative, as kustomize wants), and what each named is answered, so a caller
// can check the repository and tag. Setup renders its overlay so; the tests
// render infra/examples so.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";

/** A resource of arc-reaper by URL at a tag, as an overlay names it. */
const REMOTE = /https:\/\/github\.com\/([^/\s]+\/[^/\s]+)\/\/([^?\s]+)\?ref=(\S+)/g;

export interface RemoteBase {
  repository: string;
  path: string;
  ref: string;
}

/** Rewrites, in place, every remote base in `dir`'s YAML files to `root`'s copy of it; answers the remotes it named. */
export function pointRemoteBasesAt(dir: string, root: string): RemoteBase[] {
  const remotes: RemoteBase[] = [];
  const files = readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) => /\.ya?ml$/.test(f));
  for (const name of files) {
    const file = join(dir, name);
    const text = readFileSync(file, "utf8");
    const local = text.replace(REMOTE, (_m, repository: string, path: string, ref: string) => {
      remotes.push({ repository, path, ref });
      return relative(dirname(file), join(root, path));
    });
    if (local !== text) writeFileSync(file, local);
  }
  return remotes;
}
