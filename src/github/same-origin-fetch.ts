// Redirects from GitHub are followed only within the configured API origin
// (GitHub answers 301 for a renamed or transferred repository). A redirect to
// any other host is an error: the installation token would go with it, and
// that host's word would be read as GitHub's. Each hop is a request of its own
// (`send` spends the budget for it).

/** More hops than this is a loop, not a rename. */
const MAX_HOPS = 3;

class OffOriginRedirect extends Error {}

export function sameOriginFetch(apiUrl: string, send: typeof fetch): typeof fetch {
  const origin = new URL(apiUrl).origin;
  return async (input, init) => {
    let url = input instanceof Request ? input.url : String(input);
    let request: RequestInit = { ...init, redirect: "manual" };
    for (let hop = 0; ; hop++) {
      const response = await send(url, request);
      if (response.status < 300 || response.status >= 400 || response.status === 304) return response;
      const location = response.headers.get("location");
      let target: URL;
      try {
        target = new URL(location ?? "", url);
      } catch {
        throw new OffOriginRedirect(`GitHub answered ${response.status}, a redirect to an unreadable Location ${JSON.stringify(location)}`);
      }
      if (location === null) throw new OffOriginRedirect(`GitHub answered ${response.status}, a redirect with no Location`);
      if (target.origin !== origin) {
        throw new OffOriginRedirect(`GitHub answered ${response.status}, a redirect to ${target.origin}: redirects are followed only within ${origin}`);
      }
      if (hop >= MAX_HOPS) throw new OffOriginRedirect(`GitHub answered ${response.status} ${MAX_HOPS + 1} times in a row: a redirect loop`);
      // 303, and 301/302 after a POST, go on as a GET (as fetch itself does); 307 and 308 keep the method and body.
      const method = (request.method ?? "GET").toUpperCase();
      if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === "POST")) {
        request = { ...request, method: "GET", body: null };
      }
      url = target.href;
    }
  };
}
