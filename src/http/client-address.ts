// The address a failed login is counted against: Cloudflare's CF-Connecting-IP
// (set by Cloudflare, not by the client). An IPv6 client usually holds a whole
// /64, so IPv6 addresses count by their /64; anything missing or malformed
// falls into one shared "unknown" bucket. A port some proxies append to the
// address they forward (`203.0.113.9:443`, `[2001:db8::1]:443`) is dropped: each
// connection of one client comes from another port, and must count as one client.

export function clientAddress(header: string | undefined): string {
  const ip = withoutPort(header?.trim() ?? "");
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(ip)) return ip;
  if (/^[0-9A-Fa-f:.]{2,45}$/.test(ip) && ip.includes(":")) return ipv6Prefix64(ip) ?? "unknown";
  return "unknown";
}

/** "2001:db8:1:2::5" → "2001:db8:1:2::/64"; undefined when it is not an IPv6 address. */
function ipv6Prefix64(ip: string): string | undefined {
  // An IPv4 client seen through IPv6 counts as that IPv4 address; other embedded forms as themselves.
  const mapped = /^::ffff:(\d{1,3}(\.\d{1,3}){3})$/i.exec(ip);
  if (mapped) return mapped[1];
  // Embedded forms: at least two colons, and a dotted IPv4 address at the end.
  if (ip.includes(".")) return /^[0-9A-Fa-f:]*:[0-9A-Fa-f]*:\d{1,3}(\.\d{1,3}){3}$/.test(ip) ? ip.toLowerCase() : undefined;
  const halves = ip.split("::");
  if (halves.length > 2) return undefined;
  const part = (s: string | undefined): string[] => (s ? s.split(":") : []);
  const head = part(halves[0]);
  const tail = part(halves[1]);
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const groups = [...head, ...Array<string>(halves.length === 1 ? 0 : missing).fill("0"), ...tail];
  if (!groups.every((g) => /^[0-9A-Fa-f]{1,4}$/.test(g))) return undefined;
  return `${groups
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(":")}::/64`;
}

/** `a.b.c.d:port` → `a.b.c.d`, `[v6]:port` or `[v6]` → `v6`; anything else as it came. */
function withoutPort(ip: string): string {
  const v4 = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(ip);
  if (v4) return v4[1] as string;
  const v6 = /^\[([0-9A-Fa-f:.]+)\](?::\d{1,5})?$/.exec(ip);
  return v6 ? (v6[1] as string) : ip;
}
