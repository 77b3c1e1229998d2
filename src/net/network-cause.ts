// Why a request got no answer, as a reason code and words, from what the runtime threw. The one
// place that reads the runtimes' words (measured in test/node/server/server-network-errors.test.ts
// against workerd, and Node's error codes for the agent): everything else reads the code.
//  - workerd says "internal error; reference = <id>" for both a name that does not resolve and a TLS
//    handshake it refused (its own log line with that reference says which): DnsOrTlsFailure, which
//    fetchWithTimeout settles with a plain-HTTP probe of the same host and port (settleDnsOrTls).
//  - workerd says "Network connection lost." for a port that refused the connection and for one
//    reset or closed mid-way: ConnectionFailed.
//  - A deadline is the runtime's TimeoutError: Timeout.

export type NetworkReason = "DnsFailure" | "DnsOrTlsFailure" | "TlsFailure" | "ConnectionRefused" | "ConnectionFailed" | "Timeout";

export interface NetworkCause {
  /** The reason code. */
  code: NetworkReason;
  /** What happened, in words that name the host (and port). */
  words: string;
}

const WORDS: Record<NetworkReason, (host: string) => string> = {
  DnsFailure: (host) => `the name ${host} does not resolve (DNS)`,
  DnsOrTlsFailure: (host) => `the name ${host} does not resolve (DNS), or its TLS handshake failed`,
  TlsFailure: (host) => `the TLS handshake with ${host} failed: its certificate is not trusted here, or it speaks no TLS`,
  ConnectionRefused: (host) => `${host} refused the connection`,
  ConnectionFailed: (host) => `the connection to ${host} was refused or cut`,
  Timeout: (host) => `${host} did not answer in time`,
};

const RULES: readonly [RegExp, NetworkReason][] = [
  [/^internal error; reference = /, "DnsOrTlsFailure"],
  [/^Network connection lost/, "ConnectionFailed"],
  [/ENOTFOUND|EAI_AGAIN|getaddrinfo|failed to lookup address/, "DnsFailure"],
  [/ECONNREFUSED|[Cc]onnection refused/, "ConnectionRefused"],
  [/ECONNRESET|EPIPE|socket hang up/, "ConnectionFailed"],
  [/CERT_|certificate|TLS handshake|SSL routines|EPROTO/, "TlsFailure"],
  [/ETIMEDOUT|ESOCKETTIMEDOUT/, "Timeout"],
];

/** The cause of a request's failure from the error the runtime threw (its name and message), or undefined when it is not a network failure it knows. */
export function networkCause(error: { name: string; message: string }, host: string): NetworkCause | undefined {
  const code = error.name === "TimeoutError" ? "Timeout" : RULES.find(([words]) => words.test(error.message))?.[1];
  return code === undefined ? undefined : { code, words: WORDS[code](host) };
}

/**
 * DnsOrTlsFailure settled by a plain-HTTP request to the same host and port (`probe`: how it ended, or
 * undefined when it failed some other way). A name that does not resolve fails the probe the same way; a
 * name that does gets an answer, a closed connection or silence, so the first request's failure was its
 * TLS handshake. A plain-HTTP request that failed so was DNS already, with no probe.
 */
export function settleDnsOrTls(host: string, https: boolean, probe: NetworkCause | "answered" | undefined): NetworkCause {
  let code: NetworkReason = "TlsFailure";
  if (!https || (probe !== undefined && probe !== "answered" && probe.code === "DnsOrTlsFailure")) code = "DnsFailure";
  else if (probe === undefined) code = "DnsOrTlsFailure";
  return { code, words: WORDS[code](host) };
}
