// Which runner version an EphemeralRunner runs, as far as the object tells: the
// tag of its runner container's image (spec.spec.containers, the container ARC
// names "runner"), else a `runner-version` label on its pod template or on the
// object. Shown with the runners that never get a job (GitHub assigns none to a
// runner outside its 30-day version window); never judged on.
import { boundText } from "../github/job-names.ts";
import { isPlainObject as isObj } from "../model/shapes.ts";

/** The label a team can set when its image tag is not the runner's version (e.g. `:latest`, a digest). */
const RUNNER_VERSION_LABEL = "runner-version";
/** ARC's name for the container that runs the runner. */
const RUNNER_CONTAINER = "runner";
/** A runner version: 2.334.0, optionally with a leading v and a suffix (2.334.0-ubuntu-22.04). */
const VERSION = /^v?(\d{1,4}\.\d{1,4}\.\d{1,6})(?:$|[-_+.])/;

/** The version in an image reference's tag (`host/repo:2.334.0@sha256:…` → 2.334.0), or undefined. */
export function versionOfImage(image: unknown): string | undefined {
  if (typeof image !== "string") return undefined;
  const name = image.split("@")[0] ?? "";
  const lastSlash = name.lastIndexOf("/");
  const colon = name.indexOf(":", lastSlash + 1);
  if (colon < 0) return undefined;
  return VERSION.exec(name.slice(colon + 1))?.[1];
}

/** The runner version of an EphemeralRunner object as the API server sends it, or undefined when it does not tell. */
export function runnerVersionOf(obj: unknown): string | undefined {
  const spec = isObj(obj) && isObj(obj["spec"]) ? obj["spec"] : {};
  const pod = isObj(spec["spec"]) ? spec["spec"] : {};
  const containers = Array.isArray(pod["containers"]) ? pod["containers"] : [];
  const runner = containers.find((c) => isObj(c) && c["name"] === RUNNER_CONTAINER);
  const fromImage = isObj(runner) ? versionOfImage(runner["image"]) : undefined;
  if (fromImage) return fromImage;
  for (const meta of [spec["metadata"], isObj(obj) ? obj["metadata"] : undefined]) {
    const labels = isObj(meta) && isObj(meta["labels"]) ? meta["labels"] : {};
    const label = boundText(labels[RUNNER_VERSION_LABEL], 40);
    if (label) return VERSION.exec(label)?.[1] ?? label;
  }
  return undefined;
}
