// The agent's log lines (src/agent/log.ts) and its background loops (src/agent/background-loop.ts).
import { afterEach, describe, expect, it, vi } from "vitest";
import { BackgroundLoop } from "../../../src/agent/background-loop.ts";
import { jsonLog } from "../../../src/agent/log.ts";

afterEach(() => vi.useRealTimers());

describe("jsonLog", () => {
  it("writes one JSON object a line: the time, the level, the message, then the fields", () => {
    vi.useFakeTimers({ now: Date.UTC(2026, 11, 3, 12, 0, 0), toFake: ["Date"] });
    const lines: string[] = [];
    const log = jsonLog((line) => lines.push(line));
    log("warn", "order", { id: "o-1", n: 2, ok: false, none: null, list: ["a"] });
    log("info", "hello");
    expect(lines).toEqual([
      '{"at":"2026-12-03T12:00:00.000Z","level":"warn","msg":"order","id":"o-1","n":2,"ok":false,"none":null,"list":["a"]}',
      '{"at":"2026-12-03T12:00:00.000Z","level":"info","msg":"hello"}',
    ]);
  });

  it("writes to stdout, a line each, by default", () => {
    const write = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    try {
      jsonLog()("debug", "x");
      expect(write).toHaveBeenCalledTimes(1);
      expect(String(write.mock.calls[0]?.[0])).toMatch(/^\{"at":"[^"]+","level":"debug","msg":"x"\}\n$/);
    } finally {
      write.mockRestore();
    }
  });
});

class Loop extends BackgroundLoop {
  starts = 0;
  ended = false;
  protected async loop(signal: AbortSignal): Promise<void> {
    this.starts++;
    await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve()));
    this.ended = true;
  }
}

describe("BackgroundLoop", () => {
  it("runs its loop once however often started, and stop waits for it to return", async () => {
    const loop = new Loop();
    loop.start();
    loop.start();
    expect(loop.starts).toBe(1);
    expect(loop.ended).toBe(false);
    await loop.stop();
    expect(loop.ended).toBe(true);
    loop.start();
    expect(loop.starts).toBe(1);
  });

  it("stops when never started", async () => {
    const loop = new Loop();
    await loop.stop();
    expect(loop.starts).toBe(0);
  });
});
