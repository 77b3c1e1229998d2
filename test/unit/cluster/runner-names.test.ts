// A runner name the webhook records is one the agent protocol carries: the
// webhook's rule and the protocol's name schema agree on every name, so a
// runner recorded from a delivery can always be put in a read order.
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { nameSchema } from "../../../src/cluster/agent-message-fields.ts";
import { factsFromWebhook } from "../../../src/github/facts-from-webhook.ts";

const payload = (runner: string) => ({
  action: "in_progress",
  repository: { full_name: "octo-org/octo-repo" },
  installation: { id: 1 },
  workflow_job: { id: 11, run_id: 22, run_attempt: 1, started_at: "2026-12-03T06:00:00Z", runner_name: runner, runner_group_name: "arc-runners" },
});
const recorded = (runner: string) => factsFromWebhook("workflow_job", "guid", payload(runner)).kind === "facts";
const carried = (runner: string) => v.safeParse(nameSchema, runner).success;

describe("runner names, webhook and agent protocol alike", () => {
  it.each([
    "arc-runners-abcde-runner-x1",
    "a",
    "a.b",
    "a1.b-2.c",
    "a..b",
    "a.-b",
    "a-.b",
    "-a",
    "a-",
    ".a",
    "a.",
    "A-runner",
    "a_b",
    `${"a".repeat(253)}`,
    `${"a".repeat(254)}`,
    `${"a".repeat(63)}.${"b".repeat(189)}`,
  ])("%s: recorded exactly when the protocol carries it", (name) => {
    expect(recorded(name)).toBe(carried(name));
  });

  it("the names ARC makes are both", () => {
    expect([recorded("arc-runners-abcde-runner-x1"), carried("arc-runners-abcde-runner-x1")]).toEqual([true, true]);
    expect([recorded("a..b"), carried("a..b")]).toEqual([false, false]);
  });
});
