// A Kubernetes DNS label (RFC 1123): what a namespace and a cluster name must be.
// Lowercase letters, digits and dashes, at most 63, starting and ending with a letter or digit.
export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
