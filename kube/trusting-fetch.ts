// A fetch that trusts exactly one CA bundle. Node's global fetch has no per-call CA option (and
// NODE_EXTRA_CA_CERTS only adds to the public roots, which would let any publicly signed
// certificate for the name through), so calls to the permission server with a private CA go
// through node:https with `ca` set, which replaces the default roots.
import { request as httpsRequest } from "node:https";

/** What the init client and the Pepr watcher need of fetch: a URL, method, headers, body, signal. */
export type Fetch = (url: string, init: RequestInit) => Promise<Response>;

/** Statuses a Response may not carry a body with. */
const NO_BODY = new Set([101, 204, 205, 304]);

function headerRecord(headers: RequestInit["headers"]): Record<string, string> {
  return Object.fromEntries(new Headers(headers).entries());
}

/** fetch for https:// URLs that verifies the server against `ca` only; other URLs use fetch. */
export function trustingFetch(ca: string | undefined): Fetch {
  if (ca === undefined) return (url, init) => fetch(url, init);
  return (url, init) => {
    if (!url.startsWith("https:")) return fetch(url, init);
    return new Promise<Response>((resolve, reject) => {
      const req = httpsRequest(
        url,
        {
          method: init.method ?? "GET",
          headers: headerRecord(init.headers),
          ca,
          signal: init.signal ?? undefined,
        },
        res => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("error", reject);
          res.on("end", () => {
            const status = res.statusCode ?? 502;
            const body = NO_BODY.has(status) ? null : Buffer.concat(chunks);
            resolve(new Response(body, { status, statusText: res.statusMessage ?? "" }));
          });
        },
      );
      req.on("error", reject);
      req.end(typeof init.body === "string" ? init.body : undefined);
    });
  };
}

/** Node's codes for a server certificate that does not verify: retrying cannot fix these. */
const UNTRUSTED = new Set([
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_SIGNATURE_FAILURE",
  "CERT_UNTRUSTED",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

/** The verification code when `error` (or its cause, as fetch wraps it) is an untrusted certificate. */
export function untrustedCertificateCode(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && UNTRUSTED.has(code)) return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}
