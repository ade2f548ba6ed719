// A route's basic authentication (auth-type: basic), compiled once per table from the annotations
// and the auth-secret's content, and the check of one request's Authorization header. As nginx's
// auth_basic: no or unreadable credentials, or a user not in the file, is 401 at once; a known
// user's password is checked by the verifier's threads unless it passed recently. A Secret that is
// missing or has no users file refuses the route (503) instead of serving it open.
import type { V1Ingress } from "@kubernetes/client-node";
import { authSecretKey, parseBasicAuth, type BasicAuthConfig } from "../../core/annotations";
import { annotationKey } from "../../core/annotations/validators";
import type { AuthSecret } from "../view";
import type { OwnAnswer } from "./head-edits";
import { authMapFile, parseBasicCredentials, parseUserFile, type UserFile } from "./htpasswd";
import { sharedVerifier, type PasswordVerifier } from "./password-verifier";

export interface BasicAuthPolicy {
  /** namespace/name of the Secret, for logs. */
  readonly secret: string;
  readonly users: UserFile;
  /** The 401 with WWW-Authenticate: Basic realm="…". */
  readonly answer: OwnAnswer;
  readonly verifier: PasswordVerifier;
}

export type BasicAuthOutcome =
  | { ok: true; policy: BasicAuthPolicy }
  | { ok: false; refusal: string };

const SECRET_KEY = annotationKey("auth-secret");

/** ingress-nginx's auth-file key: the htpasswd file. */
export const AUTH_FILE_KEY = "auth";

/** The 401 nginx's auth_basic answers (its body plain text here, as the gateway's other answers). */
export function unauthorizedAnswer(realm: string): OwnAnswer {
  return Object.freeze({
    status: 401,
    // The realm's characters were checked at admission: no quote or backslash to escape.
    headers: [
      ["WWW-Authenticate", `Basic realm="${realm}"`] as const,
      ["Content-Type", "text/plain; charset=utf-8"] as const,
    ],
    body: "401 Authorization Required\n",
  });
}

const decode = (base64: string): string => Buffer.from(base64, "base64").toString("latin1");

/** The route's authentication, or why it must answer 503 instead (fail closed). */
export function compileBasicAuth(
  config: BasicAuthConfig,
  namespace: string,
  secrets: ReadonlyMap<string, AuthSecret>,
  verifier: PasswordVerifier = sharedVerifier(),
): BasicAuthOutcome {
  const key = authSecretKey(config, namespace);
  if (config.secret.namespace !== undefined && config.secret.namespace !== namespace) {
    return { ok: false, refusal: `${SECRET_KEY}: Secret ${key} is in another namespace` };
  }
  const secret = secrets.get(key);
  if (secret === undefined) {
    return {
      ok: false,
      refusal: `${SECRET_KEY}: Secret ${key} not found (or not of type Opaque)`,
    };
  }
  let text: string;
  if (config.secretType === "auth-file") {
    const file = secret.data[AUTH_FILE_KEY];
    if (file === undefined) {
      return { ok: false, refusal: `${SECRET_KEY}: Secret ${key} has no key "auth"` };
    }
    text = decode(file);
  } else {
    const entries = Object.entries(secret.data).map(([user, hash]) => [user, decode(hash)]);
    text = authMapFile(Object.fromEntries(entries) as Record<string, string>);
  }
  return {
    ok: true,
    policy: {
      secret: key,
      users: parseUserFile(text),
      answer: unauthorizedAnswer(config.realm),
      verifier,
    },
  };
}

export type AuthVerdict = "pass" | "deny" | "busy";

/**
 * The request's Authorization against the route's users: "pass" or "deny" when that is known at
 * once, else the verifier's answer to come ("busy": its queue is full).
 */
export function checkBasicAuth(
  policy: BasicAuthPolicy,
  authorization: string | undefined,
): "pass" | "deny" | Promise<AuthVerdict> {
  const credentials = parseBasicCredentials(authorization);
  if (credentials === undefined) return "deny";
  const stored = policy.users.get(credentials.user);
  if (stored === undefined) return "deny";
  const verifier = policy.verifier;
  const key = verifier.keyOf(credentials.user, credentials.password, stored);
  if (verifier.remembered(key)) return "pass";
  return verifier
    .verify(key, credentials.password, stored, policy.secret)
    .then(verdict => (verdict === "match" ? "pass" : verdict === "mismatch" ? "deny" : "busy"));
}

/** namespace/name of the Secret the Ingress's auth-secret names, in its own namespace only. */
export function authSecretOf(ingress: V1Ingress): string | undefined {
  const parsed = parseBasicAuth(ingress.metadata?.annotations);
  if (!parsed.ok || parsed.value === undefined) return undefined;
  const namespace = ingress.metadata?.namespace ?? "";
  const own = parsed.value.secret.namespace ?? namespace;
  return own === namespace ? authSecretKey(parsed.value, namespace) : undefined;
}
