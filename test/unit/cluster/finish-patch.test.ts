// Which finalizers are ARC's: only those in its API group, a whole name, never
// one that merely contains it (a foreign finalizer is never removed).
import { describe, expect, it } from "vitest";
import { finishPatch, isArcFinalizer } from "../../../src/cluster/finish-patch.ts";

describe("isArcFinalizer", () => {
  it.each(["actions.github.com/cleanup-protection", "ephemeralrunner.actions.github.com/finalizer", "a.b-c.actions.github.com/x_y.z"])("%s is ARC's", (f) =>
    expect(isArcFinalizer(f)).toBe(true),
  );
  it.each([
    "notactions.github.com/x", // the group inside another name
    "actions.github.com/x/extra", // more after the name
    "actions.github.com/", // no name
    "example.com/actions.github.com/x",
    "actions.github.com.evil.example/x",
    "actionsxgithub.com/x",
    "kubernetes.io/pvc-protection",
    "Ephemeralrunner.actions.github.com/finalizer",
  ])("%s is not", (f) => expect(isArcFinalizer(f)).toBe(false));
});

describe("finishPatch", () => {
  it("tests the uid and the very finalizers seen before removing them", () => {
    const seen = ["ephemeralrunner.actions.github.com/finalizer"];
    const patch = finishPatch("u-1", seen);
    expect(patch).toEqual([
      { op: "test", path: "/metadata/uid", value: "u-1" },
      { op: "test", path: "/metadata/finalizers", value: seen },
      { op: "remove", path: "/metadata/finalizers" },
    ]);
    expect((patch[1] as { value: unknown }).value).not.toBe(seen);
  });
});
