// Before the first change: what setup will do, in one list, with what it found
// wrong in the answers (a KUBE_API_URL a Worker cannot reach), and one
// confirmation in a terminal (--yes: the list, then on). Nothing is changed
// before the user says yes; the answers are kept either way (saved-answers.ts).
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { relative } from "node:path";
import { connect, rootCertificates } from "node:tls";
import type { StepContext } from "./context.ts";

const PRIVATE_V4: [number, number][] = [
  [0x0a000000, 8], // 10/8
  [0xac100000, 12], // 172.16/12
  [0xc0a80000, 16], // 192.168/16
  [0x7f000000, 8], // 127/8
  [0xa9fe0000, 16], // 169.254/16 (link-local)
  [0x64400000, 10], // 100.64/10 (carrier-grade NAT)
];
const PRIVATE_NAME = /(^|\.)(local|internal|lan|localdomain|home\.arpa|svc|cluster\.local|localhost)$/i;

function privateAddress(ip: string): boolean {
  if (isIP(ip) === 4) {
    const n = ip.split(".").reduce((acc, o) => acc * 256 + Number(o), 0);
    return PRIVATE_V4.some(([base, bits]) => Math.floor(n / 2 ** (32 - bits)) === Math.floor(base / 2 ** (32 - bits)));
  }
  const v6 = ip.toLowerCase();
  return v6 === "::1" || /^f[cd]/.test(v6) || /^fe[89ab]/.test(v6) || (v6.startsWith("::ffff:") && privateAddress(v6.slice(7)));
}

const PUBLIC_CA_ERRORS = new Set([
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "UNABLE_TO_GET_ISSUER_CERT",
  "CERT_UNTRUSTED",
]);

/** The TLS error of a connection to `host:port` that trusts only the public roots (as a Worker does), or undefined. */
function tlsProblem(host: string, port: number, timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, servername: isIP(host) ? undefined : host, ca: [...rootCertificates] });
    const done = (v: string | undefined) => {
      socket.destroy();
      resolve(v);
    };
    socket.setTimeout(timeoutMs, () => done("TIMEOUT"));
    socket.once("secureConnect", () => done(undefined));
    socket.once("error", (e: NodeJS.ErrnoException) => done(e.code ?? e.message));
  });
}

/** Why a Worker on Cloudflare may not reach KUBE_API_URL `value` (private address or name, private CA); empty when nothing was found. */
export async function kubeApiUrlWarnings(value: string, timeoutMs = 5_000): Promise<string[]> {
  const url = new URL(value);
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const what = `--kube-api-url ${JSON.stringify(value)} (KUBE_API_URL)`;
  const fix = "a Worker on Cloudflare reaches only public addresses: use agent mode, or a Tunnel (docs/deploy.md#direct-mode-option-a-cloudflare-tunnel)";
  const warnings: string[] = [];
  if (isIP(host) && privateAddress(host)) warnings.push(`${what} is a private address (${host}): ${fix}`);
  else if (!isIP(host) && (PRIVATE_NAME.test(host) || !host.includes("."))) warnings.push(`${what} is a private name (${host}): ${fix}`);
  else if (!isIP(host)) {
    const found = await lookup(host, { all: true }).catch(() => []);
    const inside = found.find((f) => privateAddress(f.address));
    if (inside) warnings.push(`${what} resolves to a private address here (${inside.address}): ${fix}`);
  }
  if (url.protocol === "https:") {
    const problem = await tlsProblem(host, Number(url.port || 443), timeoutMs);
    if (problem && PUBLIC_CA_ERRORS.has(problem))
      warnings.push(
        `${what}: its certificate is not publicly trusted (${problem}); a Worker cannot trust a private CA: use agent mode, or a publicly trusted certificate (docs/deploy.md#direct-mode-the-api-servers-certificate)`,
      );
  }
  return warnings;
}

/** The summary: every answer that decides what is made, by the flag that sets it. */
export function planLines(c: StepContext): string[] {
  const { a } = c;
  const config = relative(process.cwd(), c.wrangler.config) || c.wrangler.config;
  return [
    `Worker ${a.name} (--name), in dry run, written as [env.${c.wrangler.env}] (--env) into ${config} (--wrangler-config): commit it`,
    `GitHub: ${a.github.web} (--github-url), API ${a.github.api}; the App owned by ${a.accountType === "org" ? "organization" : "user"} ${a.org} (--org, --account-type)${a.existingApp ? `: the existing App ${a.existingApp.id} (--app-id)` : ", made by its manifest"}`,
    a.mode === "agent"
      ? `Agent mode (--mode): clusters ${a.clusters.join(", ")} (--clusters), image ${a.agentImage} (--agent-image)`
      : `Direct mode (--mode): the API server at ${a.kubeApiUrl ?? ""} (--kube-api-url)`,
    `Runner namespaces: ${a.namespaces.join(", ")} (--namespaces)`,
    `Progress and the agent overlays: ${relative(process.cwd(), a.stateDir) || a.stateDir} (--state-dir); nothing secret is written anywhere`,
  ];
}

/** Shows the plan (and warnings); in a terminal asks once. False: the user said no, nothing was changed. */
export async function confirmPlan(c: StepContext, warnings: string[]): Promise<boolean> {
  c.say.step("What setup will do");
  for (const line of planLines(c)) c.say.info(line);
  for (const w of warnings) c.say.warn(w);
  if (c.state.checkedAt !== undefined || c.ask === undefined) return true;
  return c.ask.confirm({ message: "Go on? (nothing has been changed yet)", initial: warnings.length === 0 });
}
