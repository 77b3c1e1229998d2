import { ResponseContext, wrapHttpLibrary, type HttpLibrary, type RequestContext } from "@kubernetes/client-node";

/**
 * client-node's default HTTP stack is undici, which cannot run in workerd;
 * this sends its requests with the runtime's fetch instead, with a timeout,
 * and counts them (each is a Workers subrequest).
 */
export function fetchHttpLibrary(opts: { timeoutMs: number; onRequest?: () => void; headers?: Record<string, string> }): HttpLibrary {
  return wrapHttpLibrary({
    async send(request: RequestContext): Promise<ResponseContext> {
      opts.onRequest?.();
      const body = request.getBody();
      for (const [name, value] of Object.entries(opts.headers ?? {})) request.setHeaderParam(name, value);
      const response = await fetch(request.getUrl(), {
        method: request.getHttpMethod().toString(),
        headers: request.getHeaders(),
        body: body === undefined ? undefined : (body as BodyInit),
        signal: AbortSignal.timeout(opts.timeoutMs),
      });
      const headers: Record<string, string> = {};
      response.headers.forEach((value, name) => {
        headers[name] = value;
      });
      const bytes = response.arrayBuffer();
      return new ResponseContext(response.status, headers, {
        text: async () => new TextDecoder().decode(await bytes),
        binary: async () => Buffer.from(await bytes),
        stream: () => null,
      });
    },
  });
}
