// The one length rule for text both sides of the agent protocol bound (src/model/text-length.ts):
// UTF-16 units, an ellipsis when cut, never half a surrogate pair.
import { describe, expect, it } from "vitest";
import { cutText, fitsText } from "../../../src/model/text-length.ts";

describe("the text length rule", () => {
  it("counts UTF-16 units: an emoji is two", () => {
    expect(fitsText("ab", 2)).toBe(true);
    expect(fitsText("abc", 2)).toBe(false);
    expect(fitsText("😀", 2)).toBe(true);
    expect(fitsText("😀", 1)).toBe(false);
  });

  it("leaves text that fits, cuts the rest to the bound with an ellipsis", () => {
    expect(cutText("abcd", 4)).toBe("abcd");
    expect(cutText("abcde", 4)).toBe("abc…");
    expect(cutText("abcde", 4, "...")).toBe("a...");
  });

  it("never leaves half a surrogate pair: a pair the cut would split goes whole", () => {
    // "a😀b": a, high, low, b. A bound of 3 keeps 2 units before the ellipsis: a and the high half, so the pair goes.
    expect(cutText("a😀b", 3)).toBe("a…");
    // A bound of 4 keeps a and the whole pair.
    expect(cutText("a😀bc", 4)).toBe("a😀…");
    // A low surrogate at the cut is the end of a whole pair: kept (the pair is before it).
    expect(cutText("😀bcd", 4)).toBe("😀b…");
    // At the very start nothing is left to keep.
    expect(cutText("😀😀", 2)).toBe("…");
    expect(cutText("😀😀", 1)).toBe("…");
    expect(cutText("😀😀", 3)).toBe("😀…");
    // The last unit of the BMP's high surrogates (U+DBFF, the pair of U+10FC00) and the first (U+D800, of U+10000).
    expect(cutText("a\u{10FC00}b", 3)).toBe("a…");
    expect(cutText("a\u{10000}b", 3)).toBe("a…");
    // A character just outside the high surrogates (U+D7FF) is not one.
    expect(cutText("a\uD7FFbc", 3)).toBe("a\uD7FF…");
  });
});
