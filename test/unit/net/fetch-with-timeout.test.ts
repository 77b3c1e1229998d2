// A request that gets no answer names where it was going and why: "fetch failed" (Node)
// or "Network connection lost." (workerd) alone does not say which address is down.
import { createServer } from "node:net";
import { expect, it } from "vitest";
import { fetchWithTimeout } from "../../../src/net/fetch-with-timeout.ts";

it("a refused connection fails with the method, origin and path, never the query", async () => {
  // A port that was free a moment ago: nothing listens there.
  const port = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
  const failed = await fetchWithTimeout(`http://127.0.0.1:${port}/app/installations?token=secret`, { method: "post" }, 5_000, async (r) => r.status).catch(
    (e: unknown) => e,
  );
  expect(failed).toBeInstanceOf(Error);
  expect((failed as Error).message).toBe(
    `127.0.0.1:${port} refused the connection [ConnectionRefused] (POST http://127.0.0.1:${port}/app/installations; the runtime said: fetch failed)`,
  );
  expect((failed as { reason?: string }).reason).toBe("ConnectionRefused");
  expect((failed as Error).message).not.toContain("secret");
});
