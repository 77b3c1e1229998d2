import { describe, expect, it } from "vitest";
import { DNS_LABEL } from "../../../src/model/shapes.ts";
import { errorText } from "../../../src/model/error-text.ts";

describe("errorText (plain Node)", () => {
  it("is an Error's message, or whatever was thrown as a string", () => {
    expect(errorText(new TypeError("bad input"))).toBe("bad input");
    expect(errorText("plain text")).toBe("plain text");
    expect(errorText(42)).toBe("42");
    expect(errorText(undefined)).toBe("undefined");
  });
});

describe("DNS_LABEL (plain Node)", () => {
  it("takes lowercase letters, digits and dashes, at most 63, not starting or ending with a dash", () => {
    for (const ok of ["a", "arc-runners", "eu-west-1", "0", "a".repeat(63)]) expect(DNS_LABEL.test(ok), ok).toBe(true);
    for (const bad of ["", "-a", "a-", "Arc", "a_b", "a.b", "a".repeat(64), "a\n"]) expect(DNS_LABEL.test(bad), JSON.stringify(bad)).toBe(false);
  });
});
