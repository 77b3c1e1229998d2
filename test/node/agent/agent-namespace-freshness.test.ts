// The agent says, per namespace, how whole its cache is (issue 22): a list's
// start, then each watch bookmark (the kube stand-in sends them as
// kube-apiserver does, to watches that allow them); and which namespaces it
// cannot read. A namespace whose watch keeps failing is never passed off as
// fresh: a relist of another namespace re-sends its cache with its old time.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { NamespaceFreshness } from "../../../src/cluster/agent-protocol.ts";
import { makeEphemeralRunner } from "../../standins/kube/control.ts";
import { startKubeStandin, type KubeStandin } from "../../standins/kube/server.ts";
import { waitFor } from "./agent-ledger-standin.ts";
import { connected, NS, NS2, ofType, seedRunner, startRig, type Rig, type RigOptions } from "./agent-rig.ts";

let standin: KubeStandin;
beforeAll(async () => {
  standin = await startKubeStandin();
});
afterAll(async () => {
  await standin.close();
});
const rigs: Rig[] = [];
afterEach(async () => {
  for (const r of rigs.splice(0).reverse()) await r.close();
});
async function rig(opts: RigOptions = {}): Promise<Rig> {
  const r = await startRig(standin, opts);
  rigs.push(r);
  return r;
}

const of = (states: NamespaceFreshness[] | undefined, ns: string) => states?.find((s) => s.namespace === ns);

describe("agent: how whole each namespace is", () => {
  it("its snapshot says each namespace is whole as of its list; each watch bookmark then says it is whole as of now", async () => {
    const r = await rig({ before: (t) => t.setBookmarkEvery(150).then(() => undefined) });
    const conn = await connected(r);
    const last = ofType(conn, "snapshot").at(-1);
    expect(last?.namespaces?.map((n) => n.namespace).sort()).toEqual([NS, NS2].sort());
    for (const ns of [NS, NS2]) {
      expect(of(last?.namespaces, ns)?.unreadable).toBeUndefined();
      expect(of(last?.namespaces, ns)?.wholeMsAgo).toBeLessThan(5_000);
    }
    // Bookmarks keep coming on a quiet watch: each says the namespace is whole as of (about) now.
    const said = await waitFor("bookmarks said for both namespaces", () => {
      const msgs = ofType(conn, "namespaces").flatMap((m) => m.namespaces);
      return [NS, NS2].every((ns) => msgs.filter((m) => m.namespace === ns).length >= 2) ? msgs : undefined;
    });
    for (const m of said) expect(m.wholeMsAgo).toBeLessThan(1_000);
    // The agent asked for bookmarks: the stand-in sends them only then.
    const watches = (await r.tenant.calls()).filter((c) => c.query["watch"] === "true");
    expect(watches.length).toBeGreaterThanOrEqual(2);
    for (const w of watches) expect(w.query["allowWatchBookmarks"]).toBe("true");
  });

  it("a namespace it can no longer read (Role removed: 403) is said unreadable at once, and a relist of another re-sends its cache with its old time, never as fresh", async () => {
    const r = await rig({ before: (t) => t.setBookmarkEvery(100).then(() => undefined) });
    const conn = await connected(r);
    await waitFor("a bookmark of NS2", () => ofType(conn, "namespaces").find((m) => m.namespaces.some((n) => n.namespace === NS2)));
    // The Role in NS2 goes: every list and watch there answers 403 from now on.
    await r.tenant.addFault({ match: { method: "GET", pathIncludes: `/namespaces/${NS2}/` }, status: 403 });
    const lostAt = Date.now();
    await r.tenant.closeWatches();
    const said = await waitFor("NS2 said unreadable", () =>
      ofType(conn, "namespaces")
        .flatMap((m) => m.namespaces)
        .find((n) => n.namespace === NS2 && n.unreadable !== undefined),
    );
    expect(said.unreadable).toMatch(/403/);
    // A runner is created in NS2 meanwhile: the agent cannot see it (it tried NS2 again since, and was refused),
    // and a second passes, so that a cache dated from when the Role went tells apart from one dated now.
    const seededAt = Date.now();
    await r.tenant.seed(seedRunner("created-while-forbidden", { namespace: NS2, workflowRunId: 4400 }));
    await waitFor(
      "a refused look at NS2 since, a second after the Role went",
      async () =>
        Date.now() - lostAt >= 1_000 &&
        (await r.tenant.calls()).some((c) => c.path.includes(`/namespaces/${NS2}/`) && c.status === 403 && Date.parse(c.time) >= seededAt)
          ? true
          : undefined,
      10_000,
    );
    // NS's history is compacted: its watch gets 410, it lists again and re-sends the whole view.
    const before = ofType(conn, "snapshot").length;
    await r.tenant.expireWatches();
    const relisted = await waitFor("a snapshot after the relist", () => {
      const parts = ofType(conn, "snapshot");
      return parts.length > before && parts.at(-1)?.namespaces !== undefined ? parts.at(-1) : undefined;
    });
    const sentAt = conn.times[conn.messages.indexOf(relisted)] ?? Date.now();
    expect(of(relisted.namespaces, NS)).toMatchObject({ namespace: NS });
    expect(of(relisted.namespaces, NS)?.unreadable).toBeUndefined();
    expect(of(relisted.namespaces, NS)?.wholeMsAgo).toBeLessThan(2_000);
    // NS2's cache goes out again, but dated from before its Role went, and said unreadable. A bookmark already on
    // its way when the fault went in may date it a moment after lostAt (seen: 62 ms at a load of 13), so the bound
    // keeps half of the second waited: a cache dated now would be tens of ms old, this one is over 500 ms.
    expect(of(relisted.namespaces, NS2)?.unreadable).toMatch(/403/);
    expect(of(relisted.namespaces, NS2)?.wholeMsAgo).toBeGreaterThanOrEqual(sentAt - lostAt - 500);
    expect(relisted.runners.map((x) => x.name)).not.toContain("created-while-forbidden");
  });

  it("a namespace it could never list does not hold back the others' snapshot: it goes out unreadable, and its first list sends the whole view again", async () => {
    const r = await rig({
      before: async (t) => {
        await t.seed(seedRunner("in-readable", { namespace: NS, workflowRunId: 4500 }));
        await t.seed(seedRunner("in-forbidden", { namespace: NS2, workflowRunId: 4501 }));
        // The Role in NS2 is missing from the start: its list answers 403.
        await t.addFault({ match: { method: "GET", pathIncludes: `/namespaces/${NS2}/` }, status: 403 });
      },
    });
    const conn = await connected(r);
    const first = ofType(conn, "snapshot").at(-1);
    expect(first?.runners.map((x) => x.name)).toEqual(["in-readable"]);
    expect(of(first?.namespaces, NS)?.unreadable).toBeUndefined();
    expect(of(first?.namespaces, NS2)?.unreadable).toMatch(/403/);
    expect(of(first?.namespaces, NS2)?.wholeMsAgo).toBeUndefined();
    // The Role comes: NS2's first list sends the whole view again, with both namespaces whole.
    await r.tenant.clearFaults();
    const again = await waitFor("a snapshot with NS2 listed", () => {
      const last = ofType(conn, "snapshot").at(-1);
      return last !== first && last?.namespaces !== undefined && of(last.namespaces, NS2)?.unreadable === undefined ? last : undefined;
    });
    expect(again.runners.map((x) => x.name).sort()).toEqual(["in-forbidden", "in-readable"]);
    expect(of(again.namespaces, NS2)?.wholeMsAgo).toBeLessThan(5_000);
  });

  it("a Failed runner with a long ARC message with emoji is sent (cut to the protocol's length), and an object it cannot read makes its namespace unreadable, not whole, until it goes", async () => {
    const message = `admission webhook denied 🚫: ${"quota exceeded 📦 ".repeat(80)}`;
    const r = await rig({
      before: async (t) => {
        await t.seed(
          makeEphemeralRunner({
            namespace: NS,
            scaleSet: "arc-runners",
            name: "arc-runners-x-runner-emoji",
            phase: "Failed",
            status: { ready: false, reason: "PodCreateFailed", message, failures: { p: "2026-12-01T10:00:00Z" } },
          }),
        );
        await t.seed(seedRunner("arc-runners-x-runner-badrepo", { namespace: NS2 }));
        // A repository name the protocol refuses: the agent cannot put this object on the wire.
        await t.patchStatus(NS2, "arc-runners-x-runner-badrepo", { workflowRunId: 5, jobRepositoryName: "not a repository" });
      },
    });
    const conn = await connected(r);
    const last = ofType(conn, "snapshot").at(-1);
    const sent = last?.runners.find((x) => x.name === "arc-runners-x-runner-emoji");
    expect(sent?.arc?.message?.length).toBeLessThanOrEqual(1000);
    expect(sent?.arc?.message?.endsWith("…")).toBe(true);
    expect(of(last?.namespaces, NS)?.unreadable).toBeUndefined();
    expect(last?.runners.map((x) => x.name)).not.toContain("arc-runners-x-runner-badrepo");
    expect(of(last?.namespaces, NS2)?.unreadable).toMatch(/^1 EphemeralRunner could not be read \(arc-runners-x-runner-badrepo: /);
    // The object goes: its namespace is readable again.
    await r.tenant.remove(NS2, "arc-runners-x-runner-badrepo");
    await waitFor("NS2 said readable again", () =>
      ofType(conn, "namespaces")
        .flatMap((m) => m.namespaces)
        .find((n) => n.namespace === NS2 && n.unreadable === undefined),
    );
  });
});
