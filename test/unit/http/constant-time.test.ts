// Secret comparison and the bearer header's token (src/http/constant-time.ts).
import { describe, expect, it } from "vitest";
import { bearerToken, constantTimeEqual } from "../../../src/http/constant-time.ts";

describe("constantTimeEqual", () => {
  it("is true only for the same text", () => {
    expect(constantTimeEqual("s3cret-token", "s3cret-token")).toBe(true);
    expect(constantTimeEqual("", "")).toBe(true);
    expect(constantTimeEqual("s3cret-token", "s3cret-tokeN")).toBe(false);
    expect(constantTimeEqual("a3cret-token", "s3cret-token")).toBe(false);
  });

  it("is false when the lengths differ, either way round, even on a common prefix", () => {
    expect(constantTimeEqual("s3cret", "s3cret-token")).toBe(false);
    expect(constantTimeEqual("s3cret-token", "s3cret")).toBe(false);
    expect(constantTimeEqual("", "x")).toBe(false);
    expect(constantTimeEqual("x", "")).toBe(false);
  });

  it("compares the UTF-8 bytes, not the characters", () => {
    expect(constantTimeEqual("é", "é")).toBe(true);
    expect(constantTimeEqual("é", "e\u0301")).toBe(false);
  });
});

describe("bearerToken", () => {
  it("takes the token of a Bearer header, any case, trailing space allowed", () => {
    expect(bearerToken("Bearer abc.DEF-123")).toBe("abc.DEF-123");
    expect(bearerToken("bearer   abc")).toBe("abc");
    expect(bearerToken("BEARER abc  ")).toBe("abc");
  });

  it.each([
    ["no header", undefined],
    ["an empty header", ""],
    ["another scheme", "Basic YTpi"],
    ["no token", "Bearer "],
    ["two tokens", "Bearer abc def"],
    ["no space after the scheme", "Bearerabc"],
    ["text before the scheme", "x Bearer abc"],
  ])("finds none in %s", (_what, header) => {
    expect(bearerToken(header)).toBeUndefined();
  });
});
