// What the agent says of each namespace (src/agent/namespace-states.ts): ages,
// never times; a whole time only moves forward; a failure is said once, and the
// next list or bookmark clears it without moving the time back.
import { describe, expect, it } from "vitest";
import { NamespaceStates } from "../../../src/agent/namespace-states.ts";

describe("NamespaceStates", () => {
  it("says never-whole namespaces without an age, and ages (not times) for the others", () => {
    const s = new NamespaceStates(["a", "b"]);
    expect(s.report(1_000)).toEqual([{ namespace: "a" }, { namespace: "b" }]);
    expect(s.whole("a", 400)).toBe(true);
    expect(s.report(1_000)).toEqual([{ namespace: "a", wholeMsAgo: 600 }, { namespace: "b" }]);
    expect(s.report(1_000, ["b"])).toEqual([{ namespace: "b" }]);
  });

  it("never moves a whole time back, and ignores namespaces it does not watch", () => {
    const s = new NamespaceStates(["a"]);
    s.whole("a", 500);
    expect(s.whole("a", 300)).toBe(false);
    expect(s.report(1_000)).toEqual([{ namespace: "a", wholeMsAgo: 500 }]);
    expect(s.whole("elsewhere", 900)).toBe(false);
    expect(s.failed("elsewhere", "403")).toBe(false);
  });

  it("keeps the last whole time through a failure, says the failure once, and clears it on the next whole or readable", () => {
    const s = new NamespaceStates(["a"]);
    s.whole("a", 100);
    expect(s.failed("a", "watch: HTTP 403 forbidden")).toBe(true);
    expect(s.failed("a", "watch: HTTP 403 forbidden")).toBe(false);
    expect(s.report(1_100)).toEqual([{ namespace: "a", wholeMsAgo: 1_000, unreadable: "watch: HTTP 403 forbidden" }]);
    expect(s.unreadable()).toEqual(["a"]);
    expect(s.readable("a")).toBe(true);
    expect(s.report(1_100)).toEqual([{ namespace: "a", wholeMsAgo: 1_000 }]);
    s.failed("a", "list: 403");
    expect(s.whole("a", 1_050)).toBe(true);
    expect(s.report(1_100)).toEqual([{ namespace: "a", wholeMsAgo: 50 }]);
  });

  it("a namespace with an object it could not read is said unreadable (naming it) until that object is read or gone, whatever bookmarks say", () => {
    const s = new NamespaceStates(["a"]);
    s.whole("a", 100);
    expect(s.listedSkipped("a", [{ name: "r-1", why: "arc.message: too long" }])).toBe(true);
    expect(s.report(1_100)).toEqual([{ namespace: "a", wholeMsAgo: 1_000, unreadable: "1 EphemeralRunner could not be read (r-1: arc.message: too long)" }]);
    expect(s.unreadable()).toEqual(["a"]);
    // A bookmark, or the watch answering again, does not bring the object into the cache.
    s.whole("a", 1_000);
    s.readable("a");
    expect(s.report(1_100)[0]?.unreadable).toMatch(/^1 EphemeralRunner could not be read/);
    expect(s.skipped("a", "r-2", "uid: missing")).toBe(true);
    expect(s.report(1_100)[0]?.unreadable).toBe("2 EphemeralRunners could not be read (r-1: arc.message: too long)");
    expect(s.read("a", "r-1")).toBe(true);
    expect(s.read("a", "r-1")).toBe(false);
    expect(s.report(1_100)[0]?.unreadable).toBe("1 EphemeralRunner could not be read (r-2: uid: missing)");
    // A relist says exactly which objects it could not read: none.
    expect(s.listedSkipped("a", [])).toBe(true);
    expect(s.report(1_100)).toEqual([{ namespace: "a", wholeMsAgo: 100 }]);
    expect(s.unreadable()).toEqual([]);
    expect(s.listedSkipped("elsewhere", [{ name: "x", why: "y" }])).toBe(false);
  });
});
