// The job's runner_id from real workflow_job payloads (@octokit/webhooks-examples): recorded as the
// registration that took the job; null or 0 is no id; anything else is an error naming the field.
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { factsFromWebhook } from "../../../src/github/facts-from-webhook.ts";

type Json = Record<string, unknown>;
const examples = createRequire(import.meta.url)("@octokit/webhooks-examples") as { name: string; examples: Json[] }[];
/** The self-hosted in_progress example, as an ARC runner would take it. */
function inProgress(runnerId: unknown): Json {
  const payload = structuredClone(examples.find((e) => e.name === "workflow_job")!.examples.find((p) => p.action === "in_progress")!);
  const job = payload.workflow_job as Json;
  Object.assign(job, { runner_name: "arc-runners-x7k2p-runner-4zq9m", runner_group_name: "arc-runners", runner_id: runnerId });
  return payload;
}

describe("workflow_job.runner_id", () => {
  it("a positive id is the fact's runnerId", () => {
    const outcome = factsFromWebhook("workflow_job", "g-1", inProgress(23));
    expect(outcome).toMatchObject({ kind: "facts", facts: [{ type: "job-started", runner: "arc-runners-x7k2p-runner-4zq9m", runnerId: 23 }] });
  });

  it.each([null, 0, undefined])("%s is no id: the fact carries none", (id) => {
    const outcome = factsFromWebhook("workflow_job", "g-2", inProgress(id));
    expect(outcome.kind).toBe("facts");
    expect(outcome.kind === "facts" && outcome.facts[0]).not.toHaveProperty("runnerId");
  });

  it.each([-1, 1.5, "23", true, Number.MAX_SAFE_INTEGER + 2])("%s is refused, naming the field: nothing is recorded", (id) => {
    expect(factsFromWebhook("workflow_job", "g-3", inProgress(id))).toEqual({
      kind: "invalid",
      error: `workflow_job.in_progress: workflow_job.runner_id must be a positive integer or null, got ${JSON.stringify(id)}`,
    });
  });
});
