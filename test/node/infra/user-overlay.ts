// A user's overlay (infra/examples/*) as a test renders it: copied to a scratch
// directory with its remote bases pointed at this checkout (scripts/lib/remote-bases.ts).
import { cpSync } from "node:fs";
import { pointRemoteBasesAt, type RemoteBase } from "../../../scripts/lib/remote-bases.ts";

export type { RemoteBase };

/** Copies `example` to `dir` with its remote bases pointed at `root`'s files; answers the remotes it named. */
export function localOverlayCopy(example: string, dir: string, root: string): RemoteBase[] {
  cpSync(example, dir, { recursive: true });
  return pointRemoteBasesAt(dir, root);
}
