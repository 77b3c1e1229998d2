// A list of EphemeralRunners as the API server sends it, less the members
// nobody here reads: `metadata.managedFields` (the server's record of which
// manager wrote which field) is half of every object's bytes and, as some
// thousand small objects of odd keys, three quarters of the time JSON.parse
// spends on a page. The server cannot be asked to leave them out (a Table's
// rows carry them too), so they are cut from the text before it is parsed.
//
// Only what is certainly such a member is cut: `"managedFields":[` right after
// `{` or `,` (in valid JSON an unescaped quote there opens a key, never sits in
// a string), up to its matching `]`, strings and escapes followed, brackets of
// both kinds matched. Anything else (whitespace around it, brackets that do not
// match, a text that ends inside it) leaves the text as it came, for JSON.parse
// to read or refuse as before. What lies inside a cut array is not checked
// beyond its strings and brackets: none of it is ever read.

const KEY = '"managedFields":';
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** The text with every `managedFields` array member cut (see above); the text itself when there is none to cut for certain. */
export function withoutManagedFields(text: string): string {
  let at = text.indexOf(KEY);
  if (at < 0) return text;
  const kept: string[] = [];
  let from = 0;
  while (at >= 0) {
    const before = text.charCodeAt(at - 1);
    const value = at + KEY.length;
    const end = (before === COMMA || before === OPEN_BRACE) && text.charCodeAt(value) === OPEN_BRACKET ? endOfArray(text, value) : -1;
    const after = end < 0 ? -1 : text.charCodeAt(end);
    if (before === COMMA && (after === COMMA || after === CLOSE_BRACE)) {
      // `,"managedFields":[…]` goes with its comma: what follows is the next member or the object's end.
      kept.push(text.slice(from, at - 1));
      from = end;
    } else if (before === OPEN_BRACE && (after === COMMA || after === CLOSE_BRACE)) {
      // The first member: it goes with the comma after it, if any.
      kept.push(text.slice(from, at));
      from = after === COMMA ? end + 1 : end;
    }
    at = text.indexOf(KEY, end < 0 ? value : end);
  }
  if (from === 0) return text;
  kept.push(text.slice(from));
  return kept.join("");
}

/** Open brackets of the array being skipped (a typed stack: an array's push and pop were a third of the time); deeper is not cut. */
const open = new Uint8Array(256);

/** The index just after the `]` that closes the array opening at `start`, or -1 (brackets that do not match, too deep, or no end). */
function endOfArray(text: string, start: number): number {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = closingQuote(text, i);
      if (i < 0) return -1;
    } else if (c === OPEN_BRACKET || c === OPEN_BRACE) {
      if (depth === open.length) return -1;
      open[depth++] = c;
    } else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) {
      if (depth === 0 || open[--depth] !== (c === CLOSE_BRACKET ? OPEN_BRACKET : OPEN_BRACE)) return -1;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

/** The index of the quote that closes the string opening at `start` (one not escaped by an odd run of backslashes), or -1. */
function closingQuote(text: string, start: number): number {
  for (let i = text.indexOf('"', start + 1); i >= 0; i = text.indexOf('"', i + 1)) {
    let backslashes = 0;
    while (text.charCodeAt(i - 1 - backslashes) === BACKSLASH) backslashes++;
    if ((backslashes & 1) === 0) return i;
  }
  return -1;
}
