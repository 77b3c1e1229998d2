// Conditional requests (issue 47): what a repeated GET sends and how its 304 is
// read. GitHub's ETags are specific to the token that earned them (installation
// tokens last an hour), so an ETag is sent only with the token it came with;
// Last-Modified, where GitHub sends it, does not depend on the token. A 304 is
// answered from the remembered summary of the 200 it stands for, never from
// guesswork: one that cannot be read as that (no validator was sent, a body came
// with it, or it names a validator other than the one sent) is an error. Pure.

/** The reason code of a 304 that cannot stand for the answer remembered. */
export const UNREADABLE_NOT_MODIFIED = "UnreadableNotModified";

/** What a 200 left for the next request of the same kind: its validators, the token it was made with, and what the decision read. */
export interface Remembered {
  /** A short hash of the token the ETag was earned with ("app" for App JWT requests); the token itself is never kept. */
  token: string;
  etag?: string;
  lastModified?: string;
  /** JSON of what the caller read from the body (not the body). */
  summary: string;
  /** When it was stored (ms). */
  storedAt: number;
}

/** Where remembered answers live (the ledger's github_validators table; a Map in tests of the client alone). */
export interface ValidatorStore {
  recall(request: string): Remembered | undefined;
  remember(request: string, remembered: Remembered): void;
  forget(request: string): void;
}

/** The conditional headers for a request made with `token`: its ETag when the same token earned it, else its Last-Modified. */
export function validatorsToSend(remembered: Remembered | undefined, token: string): Record<string, string> {
  if (!remembered) return {};
  if (remembered.etag !== undefined && remembered.token === token) return { "if-none-match": remembered.etag };
  if (remembered.lastModified !== undefined) return { "if-modified-since": remembered.lastModified };
  return {};
}

/** The validators of a 200, or undefined when it has none (then nothing is remembered). */
export function validatorsOf(headers: Readonly<Record<string, string | number | undefined>>): Pick<Remembered, "etag" | "lastModified"> | undefined {
  const etag = header(headers, "etag");
  const lastModified = header(headers, "last-modified");
  const valid = {
    ...(etag !== undefined && ETAG.test(etag) ? { etag } : {}),
    ...(lastModified !== undefined && !Number.isNaN(Date.parse(lastModified)) ? { lastModified } : {}),
  };
  return Object.keys(valid).length > 0 ? valid : undefined;
}

/**
 * Why a 304 cannot stand for the remembered answer, or undefined when it can: a validator was sent, no body
 * came (`bodyBytes`), and an ETag GitHub sends with it is the one sent (compared weakly, as RFC 9110 has it for If-None-Match).
 */
export function unreadableNotModified(
  sent: Readonly<Record<string, string>>,
  headers: Readonly<Record<string, string | number | undefined>>,
  bodyBytes: number,
): string | undefined {
  const sentEtag = sent["if-none-match"];
  if (sentEtag === undefined && sent["if-modified-since"] === undefined) return "GitHub answered 304 Not Modified to a request that sent no validator";
  if (bodyBytes > 0) return `GitHub answered 304 Not Modified with a body of ${bodyBytes} bytes`;
  const etag = header(headers, "etag");
  if (etag !== undefined) {
    if (sentEtag === undefined) return `GitHub answered 304 Not Modified with ETag ${etag} to a request that sent none`;
    if (weak(etag) !== weak(sentEtag)) return `GitHub answered 304 Not Modified with ETag ${etag}, not the ${sentEtag} sent`;
  }
  return undefined;
}

/** An entity tag as RFC 9110 writes it: optionally weak, always quoted. */
const ETAG = /^(W\/)?"[\x21\x23-\x7e\x80-\xff]*"$/;
const weak = (tag: string): string => tag.replace(/^W\//, "");

function header(headers: Readonly<Record<string, string | number | undefined>>, name: string): string | undefined {
  const value = headers[name];
  return value === undefined ? undefined : String(value);
}
