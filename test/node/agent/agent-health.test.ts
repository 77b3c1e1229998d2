// The agent's probes: /livez while the process serves, /readyz only when the
// agent says it is ready (connected with its whole view sent), else 503 and why.
import { afterEach, describe, expect, it } from "vitest";
import { startHealthServer, type HealthServer } from "../../../src/agent/health-server.ts";

let server: HealthServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("the agent's probes", () => {
  it("answers /livez always, /readyz by the agent's state, 404 elsewhere, 405 to a POST", async () => {
    let why: string | undefined = "not connected to the ledger";
    server = await startHealthServer({ port: 0, host: "127.0.0.1", notReady: () => why });
    const get = async (path: string, method = "GET") => {
      const res = await fetch(`http://127.0.0.1:${server!.port}${path}`, { method });
      return [res.status, (await res.text()).trim()];
    };
    expect(await get("/livez")).toEqual([200, "ok"]);
    expect(await get("/readyz")).toEqual([503, "not ready: not connected to the ledger"]);
    why = undefined;
    expect(await get("/readyz")).toEqual([200, "ready: connected to the ledger, snapshot sent"]);
    expect(await get("/readyz?verbose=1")).toEqual([200, "ready: connected to the ledger, snapshot sent"]);
    expect((await get("/"))[0]).toBe(404);
    expect((await get("/livez", "POST"))[0]).toBe(405);
  });

  it("a port already taken is an error the caller sees, not a crash", async () => {
    server = await startHealthServer({ port: 0, host: "127.0.0.1", notReady: () => undefined });
    await expect(startHealthServer({ port: server.port, host: "127.0.0.1", notReady: () => undefined })).rejects.toThrow(/EADDRINUSE/);
  });
});
