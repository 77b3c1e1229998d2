// The runtimes' words for a request that got no answer, mapped to reason codes: workerd's as measured
// against it (test/node/server/server-network-errors.test.ts), Node's by their error codes (the agent).
import { describe, expect, it } from "vitest";
import { networkCause, settleDnsOrTls } from "../../../src/net/network-cause.ts";
import { NetworkFailure } from "../../../src/net/fetch-with-timeout.ts";
import { networkReasonOf } from "../../../src/net/network-reason-of.ts";

const error = (message: string, name = "Error") => Object.assign(new Error(message), { name });
const HOST = "kube.example.invalid:6443";

describe("networkCause", () => {
  it.each([
    ["internal error; reference = hf52mh8jq3ilrsivd08fj37l", "DnsOrTlsFailure"],
    ["Network connection lost.", "ConnectionFailed"],
    ["getaddrinfo ENOTFOUND kube.example.invalid", "DnsFailure"],
    ["getaddrinfo EAI_AGAIN kube.example.invalid", "DnsFailure"],
    ["connect ECONNREFUSED 127.0.0.1:6443", "ConnectionRefused"],
    ["read ECONNRESET", "ConnectionFailed"],
    ["self-signed certificate", "TlsFailure"],
    ["unable to verify the first certificate", "TlsFailure"],
    ["connect ETIMEDOUT 10.0.0.1:443", "Timeout"],
  ])("%s is %s", (message, reason) => {
    expect(networkCause(error(message), HOST)?.code).toBe(reason);
  });

  it("a TimeoutError is a timeout whatever its words; words it does not know are no network cause", () => {
    expect(networkCause(error("The operation timed out.", "TimeoutError"), HOST)).toEqual({ code: "Timeout", words: `${HOST} did not answer in time` });
    expect(networkCause(error("Unexpected token < in JSON"), HOST)).toBeUndefined();
  });

  it("names the host in its words", () => {
    expect(networkCause(error("Network connection lost."), HOST)?.words).toBe(`the connection to ${HOST} was refused or cut`);
  });
});

describe("settleDnsOrTls", () => {
  const dnsOrTls = networkCause(error("internal error; reference = x"), HOST)!;
  it("is DNS when the plain-HTTP probe fails the same way, or the request was plain HTTP", () => {
    expect(settleDnsOrTls(HOST, true, dnsOrTls).code).toBe("DnsFailure");
    expect(settleDnsOrTls(HOST, false, undefined).code).toBe("DnsFailure");
  });
  it("is TLS when the probe reached the host: an answer, a cut connection or silence", () => {
    expect(settleDnsOrTls(HOST, true, "answered").code).toBe("TlsFailure");
    expect(settleDnsOrTls(HOST, true, networkCause(error("Network connection lost."), HOST)).code).toBe("TlsFailure");
    expect(settleDnsOrTls(HOST, true, networkCause(error("t", "TimeoutError"), HOST)).code).toBe("TlsFailure");
  });
  it("stays DNS-or-TLS when the probe failed some other way", () => {
    expect(settleDnsOrTls(HOST, true, undefined)).toEqual({
      code: "DnsOrTlsFailure",
      words: `the name ${HOST} does not resolve (DNS), or its TLS handshake failed`,
    });
  });
});

describe("networkReasonOf", () => {
  it("finds the NetworkFailure's code however deep it is wrapped, and a TimeoutError's", () => {
    const failure = new NetworkFailure("get", new URL("https://kube.example.invalid/apis?x=secret"), error("Network connection lost."), {
      code: "ConnectionFailed",
      words: "cut",
    });
    expect(failure.message).toBe("cut [ConnectionFailed] (GET https://kube.example.invalid/apis; the runtime said: Network connection lost)");
    expect(networkReasonOf(new Error("listing", { cause: new Error("wrapped", { cause: failure }) }))).toBe("ConnectionFailed");
    expect(networkReasonOf(new Error("x", { cause: error("t", "TimeoutError") }))).toBe("Timeout");
    expect(networkReasonOf(new Error("HTTP 403"))).toBeUndefined();
    expect(networkReasonOf("a string")).toBeUndefined();
  });
});
