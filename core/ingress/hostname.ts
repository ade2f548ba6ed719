// Host names as Ingress v1 accepts them (RFC 1123 subdomain, lowercase, a wildcard only as the
// whole first label) and the matching rules Bulwark uses between hosts and certificates.

const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const MAX_HOST_LENGTH = 253;
const MAX_LABEL_LENGTH = 63;

/** Why `host` is not a valid Ingress host, or undefined when it is. */
export function hostProblem(host: string): string | undefined {
  if (host.length === 0) return "must not be empty";
  if (host.length > MAX_HOST_LENGTH) return `must be at most ${MAX_HOST_LENGTH} characters`;
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(host) || host.includes(":"))
    return "must be a DNS name, not an IP address";
  const labels = host.split(".");
  for (const [index, label] of labels.entries()) {
    if (label === "*") {
      if (index !== 0) return "a wildcard '*' is allowed only as the first label";
      if (labels.length < 2) return "a wildcard host needs a domain after '*.'";
      continue;
    }
    if (label.includes("*"))
      return "a wildcard must be a whole label ('*.example.com'), not part of one";
    if (label.length > MAX_LABEL_LENGTH)
      return `label '${label}' is longer than ${MAX_LABEL_LENGTH} characters`;
    if (!LABEL.test(label)) {
      return `label '${label}' must be lowercase letters, digits and '-', starting and ending with a letter or digit (RFC 1123)`;
    }
  }
  return undefined;
}

/**
 * Whether a certificate name (a DNS SAN) covers an Ingress host. A wildcard certificate covers
 * exactly one label; a wildcard Ingress host needs the same wildcard name on the certificate.
 */
export function nameCoversHost(certName: string, host: string): boolean {
  const name = certName.toLowerCase();
  if (name === host) return true;
  if (!name.startsWith("*.") || host.startsWith("*.")) return false;
  const dot = host.indexOf(".");
  return dot > 0 && host.slice(dot + 1) === name.slice(2);
}
