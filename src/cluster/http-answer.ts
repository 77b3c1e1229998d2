// What an answer must be before anything reads it as the API server's: not a
// redirect (a Cloudflare Access login, a proxy), JSON by content-type, and a
// body that parses. A proxy's HTML or a login page is never an empty list.
// Messages name the status, content-type and kind, never the body.

/** An answer that is not what the Kubernetes API server would say. */
export class UnacceptableAnswer extends Error {
  readonly status: number | null;
  constructor(status: number | null, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "UnacceptableAnswer";
    this.status = status;
  }
}

/** True when a redirect points to a Cloudflare Access login page. */
function isAccessLogin(target: URL): boolean {
  return target.hostname.endsWith(".cloudflareaccess.com") || target.pathname.startsWith("/cdn-cgi/access/");
}

function redirectMessage(status: number, location: string | null, requestUrl: string): string {
  if (!location) return `HTTP ${status}: a redirect with no Location (redirects are never followed)`;
  let target: URL;
  try {
    target = new URL(location, requestUrl);
  } catch {
    return `HTTP ${status}: a redirect to an unreadable Location (redirects are never followed)`;
  }
  // Only the origin: a login URL's query carries state and may carry tokens.
  if (isAccessLogin(target)) {
    return `HTTP ${status}: a redirect to a Cloudflare Access login at ${target.origin}: the Access service token (KUBE_ACCESS_CLIENT_ID, KUBE_ACCESS_CLIENT_SECRET) is missing, expired or not allowed by the Access policy`;
  }
  return `HTTP ${status}: a redirect to ${target.origin} (redirects are never followed)`;
}

/** The media type alone, lowercased: "application/json" for "application/json; charset=utf-8". */
function mediaTypeOf(contentType: string | null): string {
  return (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

function isJsonMediaType(mediaType: string): boolean {
  return mediaType === "application/json" || /^application\/[a-z0-9.+-]*\+json$/.test(mediaType);
}

/**
 * Throws UnacceptableAnswer unless the answer is a non-redirect JSON answer;
 * returns the parsed body. `requestUrl` resolves a relative Location; `parse`
 * reads the text (JSON.parse unless the caller cuts what it never reads first).
 */
export function checkHttpAnswer(status: number, headers: Headers, text: string, requestUrl: string, parse: (text: string) => unknown = JSON.parse): unknown {
  if (status >= 300 && status < 400) throw new UnacceptableAnswer(status, redirectMessage(status, headers.get("location"), requestUrl));
  const mediaType = mediaTypeOf(headers.get("content-type"));
  if (!isJsonMediaType(mediaType)) {
    const what = mediaType === "" ? "no content-type" : `content-type ${JSON.stringify(mediaType.slice(0, 80))}`;
    throw new UnacceptableAnswer(status, `HTTP ${status} with ${what}, not JSON`);
  }
  try {
    return parse(text);
  } catch (e) {
    throw new UnacceptableAnswer(status, `HTTP ${status}: the body is not valid JSON`, { cause: e });
  }
}
