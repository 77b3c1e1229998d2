import { ResponseContext, wrapHttpLibrary, type HttpLibrary, type RequestContext } from "@kubernetes/client-node";
import { fetchWithTimeout } from "../net/fetch-with-timeout.ts";
import { checkHttpAnswer, UnacceptableAnswer } from "./http-answer.ts";

/**
 * client-node's default HTTP stack is undici, which cannot run in workerd;
 * this sends its requests with the runtime's fetch instead, with a timeout,
 * and counts them (each is a Workers subrequest).
 *
 * It never follows a redirect (the bearer token and the Access headers go to
 * the API server's origin and nowhere else) and hands client-node only JSON
 * answers: client-node would read an HTML body as a string, and a string as
 * a list with no items.
 */
export function fetchHttpLibrary(opts: SendOptions): HttpLibrary {
  return wrapHttpLibrary({
    async send(request: RequestContext): Promise<ResponseContext> {
      const body = request.getBody();
      const answer = await sendChecked(opts, request.getUrl(), {
        method: request.getHttpMethod().toString(),
        headers: request.getHeaders(),
        body: body === undefined ? undefined : (body as BodyInit),
      });
      return new ResponseContext(answer.status, answer.headers, {
        text: async () => answer.text,
        binary: async () => Buffer.from(answer.bytes),
        stream: () => null,
      });
    },
  });
}

export interface SendOptions {
  /** The only origin requests (and their credentials) may go to. */
  origin: string;
  timeoutMs: number;
  onRequest?: () => void;
  headers?: Record<string, string>;
}

/** A checked answer: its status and headers, the body as sent and as parsed JSON. */
export interface CheckedAnswer {
  status: number;
  headers: Record<string, string>;
  bytes: ArrayBuffer;
  text: string;
  json: unknown;
}

/**
 * One request to the API server's origin, never redirected, with a deadline; its answer checked
 * (checkHttpAnswer) and parsed once (by `parse`: JSON.parse unless said). Throws UnacceptableAnswer,
 * or the fetch's own error.
 */
export async function sendChecked(
  opts: SendOptions,
  url: string,
  init: { method: string; headers: Record<string, string>; body?: BodyInit },
  parse?: (text: string) => unknown,
): Promise<CheckedAnswer> {
  if (new URL(url).origin !== opts.origin) {
    throw new UnacceptableAnswer(null, `refusing to send a request to ${new URL(url).origin}, not the API server's origin`);
  }
  opts.onRequest?.();
  const { response, bytes } = await fetchWithTimeout(
    url,
    { ...init, headers: { ...init.headers, ...opts.headers }, redirect: "manual" },
    opts.timeoutMs,
    async (r) => ({ response: r, bytes: await r.arrayBuffer() }),
  );
  const text = new TextDecoder().decode(bytes);
  const json = checkHttpAnswer(response.status, response.headers, text, url, parse);
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  return { status: response.status, headers, bytes, text, json };
}
