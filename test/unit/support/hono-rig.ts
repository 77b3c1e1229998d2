// Drives src/http's middleware and routes with hono's app.request on plain Node: a fake
// LEDGER namespace whose stub the test writes (only the calls a route makes), the settings
// set as requireSettings would, and an execution context that keeps what waitUntil was given.
import { Hono, type Handler, type MiddlewareHandler } from "hono";
import type { Settings } from "../../../src/config/settings.ts";
import type { AppEnv } from "../../../src/http/app-env.ts";

/** An RpcTarget stub: the object's calls plus the dispose withAdmin calls after. */
export function rpcTarget<T extends object>(calls: T): T & { disposed: number } {
  const target = { ...calls, disposed: 0 } as T & { disposed: number; [Symbol.dispose]: () => void };
  target[Symbol.dispose] = () => {
    target.disposed++;
  };
  return target;
}

export interface Rig {
  env: AppEnv["Bindings"];
  /** The ledger names the routes asked the namespace for, in order. */
  names: string[];
  /** What the routes gave waitUntil. */
  waits: Promise<unknown>[];
  request(path: string, init?: RequestInit): Promise<Response>;
}

/** An app of one route at `path` (any method) behind `middleware`, with `settings` set. */
export function rig(
  settings: Partial<Settings>,
  ledger: object,
  route: { path: string; middleware?: MiddlewareHandler<AppEnv>[]; handler?: Handler<AppEnv> },
  vars: Record<string, unknown> = {},
): Rig {
  const names: string[] = [];
  const waits: Promise<unknown>[] = [];
  const env = {
    ...vars,
    LEDGER: {
      idFromName: (name: string) => {
        names.push(name);
        return { name };
      },
      get: () => ledger,
    },
  } as unknown as AppEnv["Bindings"];
  const app = new Hono<AppEnv>();
  app.use("*", async (c, next) => {
    c.set("settings", settings as Settings);
    await next();
  });
  for (const m of route.middleware ?? []) app.use(route.path, m);
  app.all(route.path, route.handler ?? ((c) => c.text("passed")));
  const ctx = { waitUntil: (p: Promise<unknown>) => void waits.push(p), passThroughOnException: () => undefined, props: {} };
  return { env, names, waits, request: async (path, init) => await app.request(path, init, env, ctx) };
}
