// The stand-in for undici in the Worker's bundle (src/cluster/undici-shim.ts): never called, and
// if it ever were, it says why instead of failing somewhere deep in client-node.
import { describe, expect, it } from "vitest";
import shim, { Agent, fetch, ProxyAgent } from "../../../src/cluster/undici-shim.ts";

const WHY = "arc-reaper: undici is not available in workerd; the cluster client uses fetch";

describe("undici-shim", () => {
  it("throws its reason from every export", () => {
    expect(() => new Agent()).toThrow(WHY);
    expect(() => new ProxyAgent()).toThrow(WHY);
    expect(() => fetch()).toThrow(WHY);
    expect(shim).toEqual({ Agent, ProxyAgent, fetch });
  });
});
