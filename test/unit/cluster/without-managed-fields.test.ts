// A list page is parsed without its objects' managedFields (the half of the bytes nobody reads). The cut
// must take exactly the array members named managedFields and nothing else: every other member, string
// and number reads as it did, a text JSON.parse refused is still refused, and the runners read are the same.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { runnersFromList } from "../../../src/cluster/runner-answers.ts";
import { withoutManagedFields } from "../../../src/cluster/without-managed-fields.ts";
import { jobStartedStatus, makeEphemeralRunner } from "../../standins/kube/control.ts";
import { managedFieldsOf } from "../../standins/kube/managed-fields.ts";

/** The value less every member named managedFields whose value is an array, at any depth. */
function cut(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(cut);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k, v]) => !(k === "managedFields" && Array.isArray(v)))
      .map(([k, v]) => [k, cut(v)]),
  );
}

/** What JSON.parse makes of a text: the value, or that it threw. */
function parsed(text: string): unknown {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return "refused";
  }
}

// Keys and strings that look like the member from inside a string, or next to it.
const key = fc.constantFrom("managedFields", "managedFields ", 'x"managedFields', "a", "metadata", "f:managedFields", ",", "{");
const text = fc.oneof(fc.string(), fc.constantFrom(',"managedFields":[', '{"managedFields":[1]}', "]", "[", "\\", '\\"', "}", '"managedFields":['));
const { json } = fc.letrec<{ json: unknown }>((tie) => ({
  json: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    text,
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("json"), { maxLength: 4 }),
    fc.dictionary(key, tie("json"), { maxKeys: 4 }),
  ),
}));

describe("withoutManagedFields", () => {
  it("cuts exactly the managedFields array members of any JSON, at any depth", () => {
    fc.assert(
      fc.property(json, (value) => {
        const text = JSON.stringify(value);
        expect(JSON.parse(withoutManagedFields(text))).toStrictEqual(cut(JSON.parse(text)));
      }),
      { numRuns: 3000 },
    );
  });

  it("cuts nothing it cannot be sure of: spaced or indented JSON comes back as it was", () => {
    fc.assert(
      fc.property(json, (value) => {
        const pretty = JSON.stringify(value, null, 2);
        expect(withoutManagedFields(pretty)).toBe(pretty);
        const spaced = JSON.stringify({ managedFields: [value], a: value }, null, 1);
        expect(withoutManagedFields(spaced)).toBe(spaced);
      }),
      { numRuns: 500 },
    );
  });

  it("refuses every text JSON.parse refused: each cut-short prefix of a list page", () => {
    const page = JSON.stringify(list([runner(1), runner(2)]));
    expect(page.length).toBeGreaterThan(3000);
    // One expect for all 3,000-odd prefixes: an expect each took most of the test's time, and under StrykerJS's
    // instrumentation the test outran vitest's 5 s.
    const notRefused: number[] = [];
    for (let end = 0; end < page.length; end++) if (parsed(withoutManagedFields(page.slice(0, end))) !== "refused") notRefused.push(end);
    expect(notRefused, "prefixes whose cut JSON.parse took").toStrictEqual([]);
    expect(parsed(withoutManagedFields(page))).toStrictEqual({ value: cut(JSON.parse(page)) });
  });

  it("leaves an array of brackets that do not match, or one that never ends, for JSON.parse to refuse", () => {
    for (const bad of ['{"managedFields":[{]},"a":1}', '{"a":1,"managedFields":[[}],"b":2}', '{"a":1,"managedFields":["]', '{"managedFields":[1]x}']) {
      expect(withoutManagedFields(bad)).toBe(bad);
    }
    expect(withoutManagedFields('{"managedFields":[1,"]\\"",{"b":[]}],"a":1}')).toBe('{"a":1}');
    expect(withoutManagedFields('{"a":1,"managedFields":[]}')).toBe('{"a":1}');
    expect(withoutManagedFields('{"managedFields":[]}')).toBe("{}");
    expect(withoutManagedFields('{"managedFields":"x","a":[{"managedFields":{}}]}')).toBe('{"managedFields":"x","a":[{"managedFields":{}}]}');
  });

  it("reads the same runners from a list page as the full parse", () => {
    const page = JSON.stringify(list([runner(1), runner(2), runner(3, { deletionTimestamp: "2026-12-01T11:00:00Z" })]));
    expect(page).toContain('"managedFields":[');
    const full = runnersFromList(200, "arc-runners", JSON.parse(page));
    expect(runnersFromList(200, "arc-runners", JSON.parse(withoutManagedFields(page)))).toStrictEqual(full);
    expect(full.runners.map((r) => [r.uid, r.workflowRunId, r.deletionTimestamp])).toEqual([
      ["uid-1", 6101, undefined],
      ["uid-2", 6102, undefined],
      ["uid-3", 6103, "2026-12-01T11:00:00Z"],
    ]);
    expect(withoutManagedFields(page).length).toBeLessThan(page.length * 0.7);
  });
});

/** An EphemeralRunner as the API server lists it: uid, creation time and managedFields added on create. */
function runner(n: number, metadata: Record<string, unknown> = {}) {
  const r = makeEphemeralRunner({ namespace: "arc-runners", scaleSet: "set", name: `set-runner-${n}` });
  const busy = { ...r, status: { ...r.status, ...jobStartedStatus({ workflowRunId: 6100 + n, jobRepositoryName: "octo-org/octo-repo" }) } };
  const meta = { ...busy.metadata, uid: `uid-${n}`, creationTimestamp: "2026-12-01T10:00:00Z", resourceVersion: String(n), ...metadata };
  return { ...busy, metadata: { ...meta, managedFields: managedFieldsOf({ ...busy, metadata: meta } as never, "2026-12-01T10:00:00Z") } };
}
const list = (items: unknown[]) => ({
  kind: "EphemeralRunnerList",
  apiVersion: "actions.github.com/v1alpha1",
  metadata: { resourceVersion: "9", continue: "" },
  items,
});
