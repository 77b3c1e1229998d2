// Each answer's rule, checked before anything is created: a bad answer is an
// error naming the answer and what is wrong with it, never a half-made setup.
import { readFileSync } from "node:fs";

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
// GitHub logins: letters, digits and single dashes, not at either end, at most 39.
const GITHUB_LOGIN = /^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$/;
// Worker names: lowercase letters, digits and dashes (a DNS label, as workers.dev needs).
const WORKER_NAME = DNS_LABEL;

export type Check = { ok: true } | { ok: false; problem: string };
const good: Check = { ok: true };
const bad = (problem: string): Check => ({ ok: false, problem });

export function checkLogin(what: string, value: string): Check {
  if (value.includes("/")) return bad(`${what} ${JSON.stringify(value)} has a slash: give the account's name alone (e.g. octo-org), not a path or URL`);
  return GITHUB_LOGIN.test(value) ? good : bad(`${what} ${JSON.stringify(value)} is not a GitHub account name (letters, digits and single dashes, at most 39)`);
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** Why the URL `what` names must be https://, in the words of that setting. */
function httpsWhy(what: string): string {
  if (what.includes("kube-api-url") || what.includes("KUBE_API_URL"))
    return "the Worker sends KUBE_TOKEN to the API server, so KUBE_API_URL must be https:// (http:// is taken for 127.0.0.1 alone)";
  if (what.includes("worker-url")) return "GitHub sends its webhooks to the Worker over https:// only (http:// is taken for 127.0.0.1 alone)";
  return "GitHub is reached over https:// only (http:// is taken for 127.0.0.1 alone)";
}

/** https:// only; http:// to this machine alone (a stand-in, a tunnel's local end). */
export function checkWebUrl(what: string, value: string): Check {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return bad(`${what} ${JSON.stringify(value)} is not a URL (e.g. https://github.example.com)`);
  }
  if (url.protocol === "http:" && !LOOPBACK.has(url.hostname)) return bad(`${what} ${JSON.stringify(value)} is http://: ${httpsWhy(what)}`);
  if (url.protocol !== "https:" && url.protocol !== "http:") return bad(`${what} ${JSON.stringify(value)} must start with https://`);
  if (url.search || url.hash || url.username) return bad(`${what} ${JSON.stringify(value)} must have no query, fragment or credentials`);
  return good;
}

export function checkWorkerName(value: string): Check {
  return WORKER_NAME.test(value)
    ? good
    : bad(`--name ${JSON.stringify(value)} is not a Worker name (lowercase letters, digits and dashes, at most 63, not starting or ending with a dash)`);
}

export function checkLabels(what: string, values: string[]): Check {
  if (values.length === 0) return bad(`${what} names none: give at least one`);
  for (const v of values)
    if (!DNS_LABEL.test(v))
      return bad(`${what}: ${JSON.stringify(v)} is not a DNS label (lowercase letters, digits and dashes, at most 63, not starting or ending with a dash)`);
  const dup = values.find((v, i) => values.indexOf(v) !== i);
  return dup === undefined ? good : bad(`${what} names ${dup} twice`);
}

/** Comma-separated list, blanks dropped. */
export function splitList(value: string): string[] {
  return value
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

export function checkAppId(value: string): Check {
  return /^[1-9]\d{0,11}$/.test(value) ? good : bad(`--app-id ${JSON.stringify(value)} is not a GitHub App id (a number, on the App's settings page)`);
}

export function checkImage(value: string): Check {
  return /^[a-z0-9][\w.:/@-]*$/i.test(value) && !/\s/.test(value)
    ? good
    : bad(`--agent-image ${JSON.stringify(value)} is not an image reference (e.g. ghcr.io/octo-org/arc-reaper-agent:0.2.0)`);
}

/** A file the user gives (a key, a secret, a config): there, readable and not empty. Its text, or the problem. */
export function checkFile(what: string, path: string): Check & { text?: string } {
  try {
    const text = readFileSync(path, "utf8");
    return text.trim() === "" ? bad(`${what} ${JSON.stringify(path)} is empty`) : { ok: true, text };
  } catch (e) {
    return bad(`${what} ${JSON.stringify(path)} cannot be read (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
  }
}

export function checkPrivateKey(path: string): Check {
  const file = checkFile("--app-key-file", path);
  if (!file.ok) return file;
  return /-----BEGIN (RSA )?PRIVATE KEY-----/.test(file.text ?? "")
    ? good
    : bad(`--app-key-file ${JSON.stringify(path)} is not a private key (.pem, as GitHub's "Generate a private key" saves it)`);
}

export function checkWaitMinutes(value: string): Check {
  const n = Number(value);
  return value.trim() !== "" && Number.isFinite(n) && n > 0
    ? good
    : bad(`--wait-minutes ${JSON.stringify(value)} is not a number of minutes above 0 (e.g. 30)`);
}
