// Where arc-reaper runs. On Cloudflare (the default) a Cron Trigger drives the
// sweep and Cloudflare sets CF-Connecting-IP. In the cluster (workerd with the
// config scripts/server makes, which binds ARC_REAPER_HOME = "cluster") there
// is neither: the ledger's own alarm drives the sweep every
// REAPER_SWEEP_EVERY_SECONDS, and the client address is read from the header
// the operator's proxy writes (REAPER_CLIENT_ADDRESS_HEADER, with
// REAPER_TRUSTED_PROXIES proxies in front). Pure valibot: no runtime API.
import * as v from "valibot";
import { eachStopsAtFirst, messagesOf, wholeNumber, withDefault } from "./env-schema.ts";

/** The header a trusted proxy writes the client's address into, and how many proxies stand in front. */
export interface ForwardedAddress {
  header: "x-forwarded-for" | "x-real-ip";
  trustedProxies: number;
}

export type Home =
  | { kind: "cloudflare" }
  | {
      kind: "cluster";
      /** The sweep's period: the ledger's alarm runs one this often (no Cron Triggers in workerd). */
      sweepEverySeconds: number;
      /** Unset: every request counts against one shared, limited bucket (and /healthz/deep says so). */
      clientAddress?: ForwardedAddress;
    };

export type HomeResult = { ok: true; home: Home; warnings: string[] } | { ok: false; errors: string[] };

const HEADERS = ["x-forwarded-for", "x-real-ip"] as const;

const CLUSTER = {
  REAPER_SWEEP_EVERY_SECONDS: v.pipe(wholeNumber("REAPER_SWEEP_EVERY_SECONDS", 60, 1), v.maxValue(3600, "REAPER_SWEEP_EVERY_SECONDS must be at most 3600")),
  REAPER_CLIENT_ADDRESS_HEADER: v.pipe(
    withDefault("REAPER_CLIENT_ADDRESS_HEADER", ""),
    v.toLowerCase(),
    v.picklist(["", ...HEADERS], "REAPER_CLIENT_ADDRESS_HEADER must be X-Forwarded-For or X-Real-IP, or unset"),
  ),
  REAPER_TRUSTED_PROXIES: v.pipe(wholeNumber("REAPER_TRUSTED_PROXIES", 1, 1), v.maxValue(10, "REAPER_TRUSTED_PROXIES must be at most 10")),
};
const ORDER = Object.keys(CLUSTER);
const schema = v.object(eachStopsAtFirst(CLUSTER));

/** The settings only the in-cluster server reads (the Worker on Cloudflare never looks at them). */
export const CLUSTER_HOME_SETTINGS: readonly string[] = ORDER;

export const ADDRESS_NOT_SET =
  "REAPER_CLIENT_ADDRESS_HEADER is not set: every client counts against one shared bucket (floods and failed logins); set it to the header your Ingress writes (docs/deploy.md#the-client-address)";

export function readHome(env: Readonly<Record<string, unknown>>): HomeResult {
  if (env.ARC_REAPER_HOME !== "cluster") return { ok: true, home: { kind: "cloudflare" }, warnings: [] };
  const parsed = v.safeParse(schema, Object.fromEntries(ORDER.map((k) => [k, env[k]])));
  if (!parsed.success) return { ok: false, errors: messagesOf(parsed.issues, ORDER) };
  const s = parsed.output;
  const header = s.REAPER_CLIENT_ADDRESS_HEADER;
  return {
    ok: true,
    home: {
      kind: "cluster",
      sweepEverySeconds: s.REAPER_SWEEP_EVERY_SECONDS,
      ...(header === "" ? {} : { clientAddress: { header, trustedProxies: s.REAPER_TRUSTED_PROXIES } }),
    },
    warnings: header === "" ? [ADDRESS_NOT_SET] : [],
  };
}

/** What drives the sweep in a home, and how often: the cron trigger on Cloudflare (wrangler.toml's `* * * * *`), the ledger's alarm in the cluster. */
export interface SweepDriver {
  home: Home["kind"];
  drivenBy: "cron" | "alarm";
  everySeconds: number;
}

/** Sweeps are late when none completed for their period and this long besides (the alert ArcReaperNoSweep's threshold). */
export const SWEEP_SLACK_SECONDS = 240;

export function sweepDriver(home: Home): SweepDriver {
  return home.kind === "cluster"
    ? { home: "cluster", drivenBy: "alarm", everySeconds: home.sweepEverySeconds }
    : { home: "cloudflare", drivenBy: "cron", everySeconds: 60 };
}
