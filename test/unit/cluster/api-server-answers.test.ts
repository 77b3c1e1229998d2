// What direct mode reads as the API server's word: a JSON answer that is no
// redirect (an Access login, a proxy), a delete's answer, a 404 or a uid 409
// only when it is a Kubernetes Status, and a failed call read once for both
// sides. Anything else is an error naming the status and kind, never the body.
import { ApiException } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { checkHttpAnswer, UnacceptableAnswer } from "../../../src/cluster/http-answer.ts";
import {
  apiFailure,
  checkDeleteAnswer,
  runnersFromList,
  describe as describeError,
  isNotFound,
  isUidPreconditionFailed,
  statusOf,
} from "../../../src/cluster/runner-answers.ts";

const URL_ = "https://kube.example/apis/actions.github.com/v1alpha1/namespaces/ns/ephemeralrunners";
const headers = (h: Record<string, string>) => new Headers(h);
const thrown = (f: () => unknown): UnacceptableAnswer => {
  try {
    f();
  } catch (e) {
    if (e instanceof UnacceptableAnswer) return e;
    throw e;
  }
  throw new Error("nothing thrown");
};
const status = (code: number, message?: string) => ({ kind: "Status", apiVersion: "v1", status: "Failure", code, ...(message ? { message } : {}) });
const api = (code: number, body: unknown) => new ApiException(code, `HTTP ${code}`, body, {});

describe("checkHttpAnswer", () => {
  it("parses JSON of application/json and of +json media types", () => {
    expect(checkHttpAnswer(200, headers({ "content-type": "application/json; charset=utf-8" }), '{"a":1}', URL_)).toEqual({ a: 1 });
    expect(checkHttpAnswer(200, headers({ "content-type": "Application/Merge-Patch+JSON" }), "[]", URL_)).toEqual([]);
  });

  it.each([
    [
      302,
      { location: "https://team.cloudflareaccess.com/cdn-cgi/access/login?token=secret" },
      /^HTTP 302: a redirect to a Cloudflare Access login at https:\/\/team\.cloudflareaccess\.com: the Access service token/,
    ],
    [307, { location: "/cdn-cgi/access/login" }, /^HTTP 307: a redirect to a Cloudflare Access login at https:\/\/kube\.example:/],
    [301, { location: "https://elsewhere.example/x?y=1" }, /^HTTP 301: a redirect to https:\/\/elsewhere\.example \(redirects are never followed\)$/],
    [302, {}, /^HTTP 302: a redirect with no Location/],
    [303, { location: "http://[::1" }, /^HTTP 303: a redirect to an unreadable Location/],
    [300, { location: "https://a.example/" }, /^HTTP 300: a redirect/],
    [399, { location: "https://a.example/" }, /^HTTP 399: a redirect/],
  ])("%s is a redirect, never followed, and names no query", (code, h, why) => {
    const e = thrown(() => checkHttpAnswer(code, headers({ "content-type": "application/json", ...h }), "{}", URL_));
    expect(e.message).toMatch(why);
    expect(e.message).not.toContain("secret");
    expect(e.status).toBe(code);
  });

  it.each([
    [200, {}, "HTTP 200 with no content-type, not JSON"],
    [200, { "content-type": "text/html; charset=utf-8" }, 'HTTP 200 with content-type "text/html", not JSON'],
    [404, { "content-type": "application/jsonp" }, 'HTTP 404 with content-type "application/jsonp", not JSON'],
    [200, { "content-type": "application/json" }, "HTTP 200: the body is not valid JSON"],
  ])("%s %j is not the API server's", (code, h, message) => {
    const e = thrown(() => checkHttpAnswer(code, headers(h), "<html>", URL_));
    expect(e.message).toBe(message);
    expect(e.name).toBe("UnacceptableAnswer");
  });

  it("a 400 that is JSON is handed on (its Status is read elsewhere)", () => {
    expect(checkHttpAnswer(400, headers({ "content-type": "application/json" }), JSON.stringify(status(400)), URL_)).toMatchObject({ code: 400 });
    expect(checkHttpAnswer(299, headers({ "content-type": "application/json" }), "1", URL_)).toBe(1);
  });
});

describe("checkDeleteAnswer", () => {
  it("takes a success Status or the object of that name", () => {
    expect(() => checkDeleteAnswer(200, "r", { kind: "Status", status: "Success" })).not.toThrow();
    expect(() => checkDeleteAnswer(200, "r", { kind: "EphemeralRunner", metadata: { name: "r" } })).not.toThrow();
  });
  it.each([
    [{ kind: "Status", status: "Failure" }, 'HTTP 200: a Status that is not "Success"'],
    [{ kind: "EphemeralRunner", metadata: { name: "other" } }, "HTTP 200: an EphemeralRunner of another name"],
    [{ kind: "EphemeralRunner" }, "HTTP 200: an EphemeralRunner of another name"],
    [{}, 'HTTP 200: expected kind "EphemeralRunner" or "Status", got no kind'],
    [[], 'HTTP 200: expected kind "EphemeralRunner" or "Status", got an array'],
    [null, 'HTTP 200: expected kind "EphemeralRunner" or "Status", got a null'],
    ["x", 'HTTP 200: expected kind "EphemeralRunner" or "Status", got a string'],
    [{ kind: "Pod" }, 'HTTP 200: expected kind "EphemeralRunner" or "Status", got kind "Pod"'],
  ])("refuses %j", (body, message) => {
    expect(thrown(() => checkDeleteAnswer(200, "r", body)).message).toBe(message);
  });
});

describe("errors of the API server", () => {
  it("a 404 is not found only as a Kubernetes Status of code 404", () => {
    expect(isNotFound(api(404, status(404)))).toBe(true);
    expect(isNotFound(api(404, JSON.stringify(status(404))))).toBe(true);
    expect(isNotFound(api(404, "<html>not found</html>"))).toBe(false);
    expect(isNotFound(api(404, { message: "not found" }))).toBe(false);
    expect(isNotFound(api(404, status(500)))).toBe(false);
    expect(isNotFound(api(500, status(404)))).toBe(false);
    expect(isNotFound(new Error("404"))).toBe(false);
  });

  it("a 409 is the uid precondition's only when its Status says so", () => {
    const uid = status(409, "Precondition failed: UID in precondition: a, UID in object meta: b");
    expect(isUidPreconditionFailed(api(409, uid))).toBe(true);
    expect(isUidPreconditionFailed(api(409, status(409, "the object has been modified; please apply your changes")))).toBe(false);
    expect(isUidPreconditionFailed(api(409, status(409)))).toBe(false);
    expect(isUidPreconditionFailed(api(409, { ...uid, code: 500 }))).toBe(false);
    expect(isUidPreconditionFailed(api(409, "Precondition failed: UID"))).toBe(false);
    expect(isUidPreconditionFailed(api(422, uid))).toBe(false);
    expect(isUidPreconditionFailed(new Error("409 precondition failed: uid"))).toBe(false);
  });

  it("says what went wrong from a Status message only, and the status code", () => {
    expect(describeError(api(403, status(403, "forbidden: cannot delete")))).toBe("HTTP 403: forbidden: cannot delete");
    expect(describeError(api(500, status(500)))).toBe("HTTP 500");
    expect(describeError(api(500, status(500, "")))).toBe("HTTP 500");
    expect(describeError(api(502, "<html>secret page</html>"))).toBe("HTTP 502: the body is not a Kubernetes Status");
    expect(describeError(api(502, ""))).toBe("HTTP 502");
    expect(describeError(api(502, undefined))).toBe("HTTP 502");
    expect(describeError(api(500, status(500, "x".repeat(400))))).toBe(`HTTP 500: ${"x".repeat(300)}`);
    expect(describeError(new UnacceptableAnswer(200, "HTTP 200: no"))).toBe("HTTP 200: no");
    expect(describeError(new DOMException("late", "TimeoutError"))).toBe("timed out");
    expect(describeError(new Error("boom"))).toBe("boom");
    expect(describeError("odd")).toBe("odd");
    expect([statusOf(api(418, null)), statusOf(new UnacceptableAnswer(301, "r")), statusOf(new UnacceptableAnswer(null, "r")), statusOf("x")]).toEqual([
      418,
      301,
      null,
      null,
    ]);
  });
});

describe("apiFailure", () => {
  it("keeps the status, direct mode's words and the cause; the API server's own words only when it answered", () => {
    const e = api(409, status(409, "the object has been modified"));
    expect(apiFailure(e)).toEqual({ status: 409, why: "HTTP 409: the object has been modified", said: "the object has been modified", cause: e });
    expect(apiFailure(api(500, status(500)))).toMatchObject({ status: 500, why: "HTTP 500", said: "HTTP 500" });
    expect(apiFailure(api(502, ""))).toMatchObject({ status: 502, why: "HTTP 502", said: "HTTP 502" });
    expect(apiFailure(api(502, "<html>secret page</html>"))).toMatchObject({ said: "the body is not a Kubernetes Status" });
    expect(apiFailure(api(500, status(500, "y".repeat(400)))).said).toBe("y".repeat(300));
    // An answer refused as not the API server's, and no answer at all: no words of the API server.
    expect(apiFailure(new UnacceptableAnswer(200, "HTTP 200: no"))).toEqual({ status: 200, why: "HTTP 200: no", cause: expect.any(UnacceptableAnswer) });
    expect(apiFailure(new DOMException("late", "TimeoutError"))).not.toHaveProperty("said");
    expect(apiFailure(new Error("down"))).toMatchObject({ status: null, why: "down" });
  });
});

describe("runnersFromList", () => {
  const page = (metadata?: Record<string, string>) => ({ kind: "EphemeralRunnerList", items: [], ...(metadata ? { metadata } : {}) });
  it("continues only where the page says, never on an empty token or no metadata", () => {
    expect(runnersFromList(200, "ns", page({ continue: "next-1", resourceVersion: "7" })).continueToken).toBe("next-1");
    expect(runnersFromList(200, "ns", page({ continue: "", resourceVersion: "7" })).continueToken).toBeUndefined();
    expect(runnersFromList(200, "ns", page()).continueToken).toBeUndefined();
  });
});
