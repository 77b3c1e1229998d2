// kubectl for the manifest tests: whether this machine has one (the tests that need it skip visibly
// otherwise), and `kubectl kustomize` of a directory as the objects it renders.
import { execFileSync } from "node:child_process";
import { parse as parseYaml } from "yaml";
import { isJsonObject, type KubeObject } from "./infra-rbac.ts";

export const hasKubectl: boolean = (() => {
  try {
    execFileSync("kubectl", ["version", "--client"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

/** The objects `kubectl kustomize dir` renders. */
export function kustomize(dir: string): KubeObject[] {
  return execFileSync("kubectl", ["kustomize", dir], { encoding: "utf8" })
    .split(/^---$/m)
    .map((d) => parseYaml(d) as unknown)
    .filter(isJsonObject) as KubeObject[];
}
