// Author-written names (workflow, job, branch) and the run's page, as they are
// stored: cleaned of control and bidirectional-override characters, cut to 200
// UTF-16 units (the agent protocol's rule), never through a surrogate pair, and only https URLs of that very run kept.
import { describe, expect, it } from "vitest";
import { boundName, httpsUrl, MAX_NAME_CHARS, namesOfJob, namesOfRun } from "../../../src/github/job-names.ts";

describe("boundName", () => {
  it.each([
    ["CI / build (linux)", "CI / build (linux)"],
    ["  spaced\tout\n name ", "spaced out name"],
    ["\u202emain\u202c", "main"],
    ["a\u2066b\u2069c\u200fd\u061ce", "abcde"],
    ["nul\u0000and\u007fdel\u0085", "nulanddel"],
    ["שלום", "שלום"], // right-to-left text itself stays; only the overrides go
    ["", undefined],
    [" \u202e ", undefined],
    ["a \u202e b", "a b"],
  ])("%j is stored as %j", (input, stored) => {
    expect(boundName(input)).toBe(stored);
  });

  it("is undefined for anything but a string", () => {
    for (const v of [null, undefined, 42, {}, ["x"]]) expect(boundName(v)).toBeUndefined();
  });

  it("cuts at 200 UTF-16 units with an ellipsis, never through a surrogate pair", () => {
    expect(boundName("x".repeat(MAX_NAME_CHARS))).toBe("x".repeat(MAX_NAME_CHARS));
    // 199 units before the ellipsis would split the 100th emoji: it goes whole.
    const cut = boundName("😀".repeat(300))!;
    expect(cut).toBe(`${"😀".repeat(99)}…`);
    expect(cut.length).toBeLessThanOrEqual(MAX_NAME_CHARS);
    expect(encodeURIComponent(cut)).toBeTruthy(); // throws on a lone surrogate
    const odd = boundName(`x${"😀".repeat(300)}`)!;
    expect(odd).toBe(`x${"😀".repeat(99)}…`);
    expect(odd.length).toBe(MAX_NAME_CHARS);
  });
});

describe("httpsUrl and the run's page", () => {
  it.each([
    ["https://github.com/o/r/actions/runs/1", "https://github.com/o/r/actions/runs/1"],
    ["http://github.com/o/r/actions/runs/1", undefined],
    ["javascript:alert(1)", undefined],
    ["data:text/html,<script>alert(1)</script>", undefined],
    ["https://user:pass@github.com/o/r", undefined],
    ["https://github.com/o/r\u202e", undefined],
    [`https://github.com/${"a".repeat(1000)}`, undefined],
    ["not a url", undefined],
  ])("%j: %j", (input, kept) => {
    expect(httpsUrl(input)).toBe(kept);
  });

  it("takes a job's run page from its html_url only when it names that run", () => {
    expect(namesOfJob({ run_id: 5, html_url: "https://github.com/o/r/actions/runs/5/job/9" })).toEqual({ runUrl: "https://github.com/o/r/actions/runs/5" });
    expect(namesOfJob({ run_id: 5, html_url: "https://github.com/o/r/actions/runs/5/jobs/9" })).toEqual({ runUrl: "https://github.com/o/r/actions/runs/5" });
    expect(namesOfJob({ run_id: 6, html_url: "https://github.com/o/r/actions/runs/5/job/9" })).toBeUndefined();
    expect(namesOfJob({ run_id: 5, html_url: "https://github.com/o/r/runs/9" })).toBeUndefined(); // the check run's page
    expect(namesOfRun({ id: 5, name: "CI", html_url: "https://github.com/o/r/actions/runs/50" })).toEqual({ workflow: "CI" });
  });
});
