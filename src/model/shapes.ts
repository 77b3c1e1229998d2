// The shapes every layer checks the same way, each defined once: a Kubernetes DNS label (a namespace, a
// cluster name), a DNS subdomain (an object's name: what ARC names a runner after), a repository's
// owner/name, and a plain JSON object. The webhook, the admin routes, the agent protocol and the settings
// all read these, so a runner name one accepts the others carry.

/** RFC 1123 label: lowercase letters, digits and dashes, at most 63, starting and ending with a letter or digit. */
export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** RFC 1123 subdomain: labels joined by dots (its length, at most 253, is checked by isObjectName). */
export const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** A Kubernetes object's name: a DNS subdomain of at most 253 characters. */
export const isObjectName = (v: unknown): v is string => typeof v === "string" && v.length <= 253 && DNS_SUBDOMAIN.test(v);

/** A repository as GitHub names it: owner/name, neither part empty, no slash or whitespace within. */
const OWNER_REPO = /^[^/\s]+\/[^/\s]+$/;
export const isOwnerRepo = (v: unknown): v is string => typeof v === "string" && OWNER_REPO.test(v);

/** A JSON object (not null, not an array). */
export const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
