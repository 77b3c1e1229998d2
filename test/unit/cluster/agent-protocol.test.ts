// The strict parsers of the agent <-> ledger messages (src/cluster/parse-*-message.ts):
// every valid shape passes unchanged, anything else throws an error naming the
// field and the value. That they import nothing but their own (usable in workerd):
// test/node/agent/agent-protocol-files.test.ts, which reads the files (Stryker's copies are instrumented).
import { describe, expect, it } from "vitest";
import type { AgentMessage, AgentRunner } from "../../../src/cluster/agent-protocol.ts";
import { AgentMessageError, MAX_RUNNERS_PER_PART, parseAgentMessage } from "../../../src/cluster/parse-agent-message.ts";
import { parseLedgerMessage } from "../../../src/cluster/parse-ledger-message.ts";
import { RUNNERS_PER_PART, snapshotMessages } from "../../../src/agent/runner-view.ts";

const runner: AgentRunner = {
  namespace: "arc-runners",
  name: "arc-runners-x7k2p-runner-c4ncl",
  uid: "0b3c6a52-71c4-4d7e-9a59-2f1b7a6c9e10",
  creationTimestamp: "2026-11-30T10:00:00Z",
  deletionTimestamp: "2026-11-30T11:00:00Z",
  workflowRunId: 9001,
  jobRepositoryName: "octo-org/octo-repo",
};
const order = { type: "order", id: "ord-1", namespace: "arc-runners", name: runner.name, uid: runner.uid, runId: 9001, reason: "run 9001 is cancelled" };

const valid: AgentMessage[] = [
  { type: "hello", version: "0.1.0", namespaces: ["arc-runners", "team-b"], dryRun: false },
  { type: "hello", version: "0.1.0", namespaces: ["arc-runners"], dryRun: false, cluster: "eu-west" },
  {
    type: "snapshot",
    id: "snap-1",
    part: 1,
    parts: 1,
    runners: [runner, { namespace: "team-b", name: "idle", uid: "u-2", creationTimestamp: "2026-11-30T10:00:00.123Z" }],
  },
  { type: "snapshot", id: "snap-2", part: 2, parts: 3, runners: [] },
  { type: "upsert", runner },
  { type: "remove", namespace: "arc-runners", name: runner.name, uid: runner.uid },
  { type: "report", id: "ord-1", uid: runner.uid, outcome: "refused", why: "dry run" },
  {
    type: "snapshot",
    id: "snap-3",
    part: 1,
    parts: 1,
    runners: [],
    namespaces: [
      { namespace: "arc-runners", wholeMsAgo: 1200 },
      { namespace: "team-b", unreadable: "watch: HTTP 403 forbidden" },
    ],
  },
  { type: "namespaces", namespaces: [{ namespace: "arc-runners", wholeMsAgo: 0 }] },
];

function thrown(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(AgentMessageError);
    return (e as Error).message;
  }
  throw new Error("expected the parser to throw");
}

const withField = (base: object, field: string, value: unknown): string => JSON.stringify({ ...base, [field]: value });

describe("parseAgentMessage", () => {
  it.each(valid.map((m) => [m.type, m] as const))("passes a valid %s unchanged", (_t, m) => {
    expect(parseAgentMessage(JSON.stringify(m))).toEqual(m);
  });

  it.each([
    ["not JSON", "{", /^message: not JSON/],
    ["an array", "[]", /^message: expected a JSON object, got \[\]/],
    ["an unknown type", '{"type":"hola"}', /^type: expected one of "hello", .*got "hola"/],
    ["no type", "{}", /^type: .*got nothing/],
    ["an extra field", withField(valid[0] ?? {}, "extra", 1), /^hello\.extra: expected no such field .*got 1/],
    ["no namespaces", withField(valid[0] ?? {}, "namespaces", []), /^hello\.namespaces: expected at least one namespace, got \[\]/],
    ["a bad namespace", withField(valid[0] ?? {}, "namespaces", ["Arc_Runners"]), /^hello\.namespaces\[0\]: expected a namespace name .*got "Arc_Runners"/],
    ["a namespace twice", withField(valid[0] ?? {}, "namespaces", ["a", "a"]), /^hello\.namespaces: expected no namespace twice, got "a"/],
    ["a bad cluster", withField(valid[0] ?? {}, "cluster", "EU_West"), /^hello\.cluster: expected a cluster name \(DNS label\), got "EU_West"/],
    ["dryRun as text", withField(valid[0] ?? {}, "dryRun", "false"), /^hello\.dryRun: expected true or false, got "false"/],
    ["part above parts", withField(valid[2] ?? {}, "part", 2), /^snapshot\.part: expected an integer from 1 to 1, got 2/],
    ["a fractional part", withField(valid[2] ?? {}, "parts", 1.5), /^snapshot\.parts: expected an integer .*got 1\.5/],
    ["an empty snapshot id", withField(valid[2] ?? {}, "id", ""), /^snapshot\.id: expected an id .*got ""/],
    [
      "a runner twice",
      withField(valid[2] ?? {}, "runners", [runner, runner]),
      /^snapshot\.runners: expected each namespace\/name once, got "arc-runners\/arc-runners-x7k2p-runner-c4ncl"/,
    ],
    [
      "a run id as text",
      JSON.stringify({ type: "upsert", runner: { ...runner, workflowRunId: "9001" } }),
      /^upsert\.runner\.workflowRunId: expected an integer from 1 to \d+, got "9001"/,
    ],
    ["a run id of 0", JSON.stringify({ type: "upsert", runner: { ...runner, workflowRunId: 0 } }), /^upsert\.runner\.workflowRunId: .*got 0/],
    [
      "a run id past 2^53",
      `{"type":"upsert","runner":${JSON.stringify(runner).replace("9001", "9007199254740993")}}`,
      /^upsert\.runner\.workflowRunId: .*got 9007199254740992/,
    ],
    [
      "a bad timestamp",
      JSON.stringify({ type: "upsert", runner: { ...runner, creationTimestamp: "yesterday" } }),
      /^upsert\.runner\.creationTimestamp: expected an RFC 3339 timestamp, got "yesterday"/,
    ],
    [
      "a name with capitals",
      JSON.stringify({ type: "remove", namespace: "a", name: "Runner", uid: "u" }),
      /^remove\.name: expected an object name .*got "Runner"/,
    ],
    ["a uid with a space", JSON.stringify({ type: "remove", namespace: "a", name: "r", uid: "a b" }), /^remove\.uid: expected an object uid, got "a b"/],
    [
      "a repository without owner",
      JSON.stringify({ type: "upsert", runner: { ...runner, jobRepositoryName: "octo-repo" } }),
      /^upsert\.runner\.jobRepositoryName: expected a repository "owner\/name", got "octo-repo"/,
    ],
    [
      "an unknown runner field",
      JSON.stringify({ type: "upsert", runner: { ...runner, phase: "Running" } }),
      /^upsert\.runner\.phase: expected no such field .*got "Running"/,
    ],
    ["an unknown outcome", withField(valid[6] ?? {}, "outcome", "maybe"), /^report\.outcome: expected one of deleted, gone, refused, failed, got "maybe"/],
    ["an empty why", withField(valid[6] ?? {}, "why", ""), /^report\.why: expected a string of 1 to 2000 characters, got ""/],
    [
      "a negative age",
      JSON.stringify({ type: "namespaces", namespaces: [{ namespace: "a", wholeMsAgo: -1 }] }),
      /^namespaces\.namespaces\[0\]\.wholeMsAgo: expected an integer from 0 to \d+, got -1/,
    ],
    [
      "a namespace said twice",
      JSON.stringify({ type: "namespaces", namespaces: [{ namespace: "a" }, { namespace: "a" }] }),
      /^namespaces\.namespaces: expected each namespace once, got "a"/,
    ],
    ["no namespace said", JSON.stringify({ type: "namespaces", namespaces: [] }), /^namespaces\.namespaces: expected at least one namespace, got \[\]/],
    [
      "freshness on a part before the last",
      JSON.stringify({ type: "snapshot", id: "s", part: 1, parts: 2, runners: [], namespaces: [{ namespace: "a" }] }),
      /^snapshot\.namespaces: expected only on the last part/,
    ],
    [
      "an unknown field deep inside",
      JSON.stringify({ type: "snapshot", id: "s", part: 1, parts: 1, runners: [runner, { ...runner, name: "r-2", phase: "Running" }] }),
      /^snapshot\.runners\[1\]\.phase: expected no such field .*got "Running"/,
    ],
    [
      "a missing field deep inside",
      JSON.stringify({ type: "snapshot", id: "s", part: 1, parts: 1, runners: [{ ...runner, uid: undefined }] }),
      /^snapshot\.runners\[0\]\.uid: expected an object uid, got nothing/,
    ],
  ])("refuses %s, naming the field and the value", (_what, text, message) => {
    expect(thrown(() => parseAgentMessage(text))).toMatch(message);
  });

  it("refuses a message over the Worker's 1 MiB limit and a part with too many runners", () => {
    expect(thrown(() => parseAgentMessage(" ".repeat(1024 * 1024 + 1)))).toMatch(/^message: expected at most 1048576 characters/);
    const many = Array.from({ length: MAX_RUNNERS_PER_PART + 1 }, (_, i) => ({ ...runner, name: `r-${i}` }));
    expect(thrown(() => parseAgentMessage(JSON.stringify({ type: "snapshot", id: "s", part: 1, parts: 1, runners: many })))).toMatch(
      /^snapshot\.runners: expected an array of at most 1000 items/,
    );
  });

  it("shortens long values in its messages", () => {
    const message = thrown(() => parseAgentMessage(withField(valid[0] ?? {}, "version", "v".repeat(500))));
    expect(message.length).toBeLessThan(200);
  });
});

describe("snapshot parts", () => {
  it("splits a large view into parts the parser accepts, each under 1 MiB, with one id", () => {
    const runners = Array.from({ length: 1234 }, (_, i) => ({ ...runner, name: `${"n".repeat(200)}-${i}` }));
    const parts = snapshotMessages(runners, "big");
    expect(parts).toHaveLength(Math.ceil(1234 / RUNNERS_PER_PART));
    const back: AgentRunner[] = [];
    for (const [i, m] of parts.entries()) {
      const text = JSON.stringify(m);
      expect(text.length).toBeLessThan(1024 * 1024);
      const parsed = parseAgentMessage(text);
      expect(parsed).toMatchObject({ type: "snapshot", id: "big", part: i + 1, parts: parts.length });
      if (parsed.type === "snapshot") back.push(...parsed.runners);
    }
    expect(back).toEqual(runners);
  });

  it("sends an empty view as one empty part", () => {
    expect(snapshotMessages([], "empty")).toEqual([{ type: "snapshot", id: "empty", part: 1, parts: 1, runners: [] }]);
  });
});

describe("read reports", () => {
  it("passes a found runner, a 404 (null) and a failed read (why), and refuses a runner that is not one", () => {
    const found = {
      type: "read-report",
      id: "r-1",
      runner: { namespace: "arc-runners", name: "x-1", uid: "0b3c6a52-1111-4d7e-9a59-2f1b7a6c9e10", creationTimestamp: "2026-11-30T10:00:00Z" },
    };
    expect(parseAgentMessage(JSON.stringify(found))).toEqual(found);
    expect(parseAgentMessage(JSON.stringify({ type: "read-report", id: "r-2", runner: null }))).toEqual({ type: "read-report", id: "r-2", runner: null });
    expect(parseAgentMessage(JSON.stringify({ type: "read-report", id: "r-3", runner: null, why: "403" }))).toEqual({
      type: "read-report",
      id: "r-3",
      runner: null,
      why: "403",
    });
    expect(thrown(() => parseAgentMessage(JSON.stringify({ type: "read-report", id: "r-4", runner: { name: "x" } })))).toMatch(/^read-report\.runner/);
  });
});

describe("parseLedgerMessage", () => {
  it("passes a valid order unchanged", () => {
    expect(parseLedgerMessage(JSON.stringify(order))).toEqual(order);
    const failed = { ...order, runId: undefined, cause: "failed" };
    expect(parseLedgerMessage(JSON.stringify(failed))).toEqual({
      type: "order",
      id: "ord-1",
      namespace: "arc-runners",
      name: runner.name,
      uid: runner.uid,
      cause: "failed",
      reason: order.reason,
    });
  });

  it("passes a valid read unchanged, and refuses one with a bad name or an extra field", () => {
    const read = { type: "read", id: "r-1", namespace: "arc-runners", name: "arc-runners-abcde-runner-x" };
    expect(parseLedgerMessage(JSON.stringify(read))).toEqual(read);
    expect(thrown(() => parseLedgerMessage(JSON.stringify({ ...read, name: "Not A Name" })))).toMatch(/^read\.name: .*got "Not A Name"/);
    expect(thrown(() => parseLedgerMessage(JSON.stringify({ ...read, uid: "x" })))).toMatch(/^read\.uid: expected no such field/);
  });

  it.each([
    ["another type", JSON.stringify({ ...order, type: "delete" }), /^type: expected one of "order", "read", "finish", got "delete"/],
    ["no uid", JSON.stringify({ ...order, uid: undefined }), /^order\.uid: expected an object uid, got nothing/],
    ["a run id as text", JSON.stringify({ ...order, runId: "9001" }), /^order\.runId: .*got "9001"/],
    ["a negative run id", JSON.stringify({ ...order, runId: -1 }), /^order\.runId: .*got -1/],
    ["a bad namespace", JSON.stringify({ ...order, namespace: "kube system" }), /^order\.namespace: .*got "kube system"/],
    ["an id with a space", JSON.stringify({ ...order, id: "a b" }), /^order\.id: .*got "a b"/],
    ["no reason", JSON.stringify({ ...order, reason: "" }), /^order\.reason: .*got ""/],
    ["neither a run nor a cause", JSON.stringify({ ...order, runId: undefined }), /^order: .*either runId or cause "failed"/],
    ["both a run and a cause", JSON.stringify({ ...order, cause: "failed" }), /^order: .*either runId or cause "failed"/],
    ["a finish order without a uid", JSON.stringify({ type: "finish", id: "f-1", namespace: "arc-runners", name: runner.name, reason: "r" }), /^finish\.uid: /],
    ["another cause", JSON.stringify({ ...order, runId: undefined, cause: "idle" }), /^order\.cause: .*got "idle"/],
    ["an extra field", JSON.stringify({ ...order, force: true }), /^order\.force: expected no such field .*got true/],
  ])("refuses %s, naming the field and the value", (_what, text, message) => {
    expect(thrown(() => parseLedgerMessage(text))).toMatch(message);
  });
});
