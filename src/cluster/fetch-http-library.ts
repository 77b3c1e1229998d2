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
export function fetchHttpLibrary(opts: {
  /** The only origin requests (and their credentials) may go to. */
  origin: string;
  timeoutMs: number;
  onRequest?: () => void;
  headers?: Record<string, string>;
}): HttpLibrary {
  return wrapHttpLibrary({
    async send(request: RequestContext): Promise<ResponseContext> {
      const url = request.getUrl();
      if (new URL(url).origin !== opts.origin) {
        throw new UnacceptableAnswer(null, `refusing to send a request to ${new URL(url).origin}, not the API server's origin`);
      }
      opts.onRequest?.();
      const body = request.getBody();
      for (const [name, value] of Object.entries(opts.headers ?? {})) request.setHeaderParam(name, value);
      const { response, bytes } = await fetchWithTimeout(
        url,
        {
          method: request.getHttpMethod().toString(),
          headers: request.getHeaders(),
          body: body === undefined ? undefined : (body as BodyInit),
          redirect: "manual",
        },
        opts.timeoutMs,
        async (r) => ({ response: r, bytes: await r.arrayBuffer() }),
      );
      const text = new TextDecoder().decode(bytes);
      checkHttpAnswer(response.status, response.headers, text, url);
      const headers: Record<string, string> = {};
      response.headers.forEach((value, name) => {
        headers[name] = value;
      });
      return new ResponseContext(response.status, headers, {
        text: async () => text,
        binary: async () => Buffer.from(bytes),
        stream: () => null,
      });
    },
  });
}
