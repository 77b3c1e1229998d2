// readEphemeralRunner reads an object of the usual shape without valibot (a sweep over 10,000 runners
// reads 10,000 of them a minute) and hands everything else to the schema: for every value it must answer
// exactly what the schema answers (the same fields, in the same order, or the same error), or a runner's
// run, uid or deletion would read differently in the one place it is not checked by the schema.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { readEphemeralRunner, readEphemeralRunnerBySchema } from "../../../src/cluster/ephemeral-runner.ts";
import { ARC_VERSIONS, jobStartedStatus, makeEphemeralRunner } from "../../standins/kube/control.ts";

/** What a read answers: the runner and its keys in order, or the error's class and words. */
function outcome(read: (value: unknown) => unknown, value: unknown): unknown {
  try {
    const r = read(value) as Record<string, unknown>;
    return { runner: r, keys: Object.keys(r) };
  } catch (e) {
    return { error: (e as Error).constructor.name, message: (e as Error).message };
  }
}

const expectSame = (value: unknown) => expect(outcome(readEphemeralRunner, value)).toStrictEqual(outcome(readEphemeralRunnerBySchema, value));

/** Any value a field could hold, the odd ones most often. */
const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  {
    arbitrary: fc.constantFrom(
      undefined,
      null,
      "",
      " ",
      "x",
      "2026-12-01T10:00:00Z",
      0,
      1,
      -3,
      1.5,
      6100,
      Number.MAX_SAFE_INTEGER,
      Number.MAX_SAFE_INTEGER + 2,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      true,
      false,
      [],
      ["a"],
      {},
    ),
    weight: 6,
  },
  { arbitrary: fc.string(), weight: 1 },
  { arbitrary: fc.integer(), weight: 1 },
  { arbitrary: fc.dictionary(fc.constantFrom("a", "__proto__", "constructor", "phase"), fc.string(), { maxKeys: 2 }), weight: 1 },
);
/** A field's usual value mostly, any value now and then: most objects pass, each with a field or two that may not. */
const usually = (value: unknown): fc.Arbitrary<unknown> => fc.oneof({ arbitrary: fc.constant(value), weight: 3 }, { arbitrary: anyValue, weight: 1 });
const someKeys = { requiredKeys: [] as never[] };

const metadata = fc.record(
  {
    name: usually("runner-a"),
    uid: usually("00000000-0000-0000-0000-000000000001"),
    namespace: usually("arc-runners"),
    creationTimestamp: usually("2026-12-01T10:00:00Z"),
    deletionTimestamp: fc.oneof(fc.constant("2026-12-01T11:00:00Z"), anyValue),
    labels: fc.oneof(fc.record({ "actions.github.com/scale-set-name": usually("set"), "runner-version": usually("2.334.0") }, someKeys), anyValue),
    finalizers: usually(["actions.github.com/ephemeralrunner-finalizer"]),
    managedFields: fc.constant([{ manager: "m", fieldsV1: { "f:metadata": {} } }]),
  },
  someKeys,
);
const status = fc.record(
  {
    runnerId: usually(4711),
    workflowRunId: usually(6100),
    jobRepositoryName: usually("octo-org/octo-repo"),
    phase: usually("Running"),
    reason: fc.oneof(fc.constant("TooManyPodFailures"), anyValue),
    message: fc.oneof(fc.constant("pod failed\n5 times"), anyValue),
    failures: fc.oneof(fc.constant({ "pod-uid": "2026-12-01T10:05:00Z" }), anyValue),
  },
  someKeys,
);
const spec = usually({ spec: { containers: [{ name: "runner", image: "ghcr.io/actions/actions-runner:2.334.0" }] } });
const object = fc.oneof(
  {
    arbitrary: fc.record(
      { metadata: fc.oneof({ arbitrary: metadata, weight: 6 }, { arbitrary: anyValue, weight: 1 }), status: fc.oneof(status, anyValue), spec, kind: anyValue },
      { requiredKeys: ["metadata"] },
    ),
    weight: 12,
  },
  { arbitrary: anyValue, weight: 1 },
);

describe("readEphemeralRunner answers what the schema answers", () => {
  it("for any value, as built and as it comes back from JSON", () => {
    let read = 0;
    fc.assert(
      fc.property(object, (value) => {
        expectSame(value);
        const json = JSON.stringify(value);
        if (json !== undefined) expectSame(JSON.parse(json));
        if (!("error" in (outcome(readEphemeralRunner, value) as object))) read++;
      }),
      { numRuns: 10_000 },
    );
    // A good share of the values are runners (the fast path's own answers), the rest the schema's errors.
    expect(read).toBeGreaterThan(1000);
  });

  it.each(ARC_VERSIONS)("for the objects of ARC %s, idle, busy, Failed and being deleted", (version) => {
    const idle = makeEphemeralRunner({ namespace: "arc-runners", scaleSet: "set", phase: "Pending", arcVersion: version, runnerId: 4711 });
    const created = { ...idle, metadata: { ...idle.metadata, uid: "00000000-0000-0000-0000-000000000001", creationTimestamp: "2026-12-01T10:00:00Z" } };
    const busy = { ...created, status: { ...created.status, ...jobStartedStatus({ workflowRunId: 6100, jobRepositoryName: "octo-org/octo-repo" }) } };
    const failed = { ...created, status: { ...created.status, phase: "Failed", reason: "TooManyPodFailures", message: "pod failed\n5 times" } };
    const deleting = { ...busy, metadata: { ...busy.metadata, deletionTimestamp: "2026-12-01T11:00:00Z" } };
    for (const value of [idle, created, busy, failed, deleting]) {
      expectSame(value);
      expectSame(JSON.parse(JSON.stringify(value)));
    }
    expect(readEphemeralRunner(busy)).toMatchObject({ uid: created.metadata.uid, workflowRunId: 6100, jobRepositoryName: "octo-org/octo-repo" });
  });
});
