// Who is calling. The init client presents its pod's projected service-account token (audience:
// the permission server); TokenReview says which pod it is bound to, and that must be the pod the
// call is about. Revoke and reset come from controllers and operators: their token (the API
// server's audience) is reviewed, then a SubjectAccessReview asks whether that user may patch
// the pod: whoever may remove the pod's finalizer may as well ask us to revoke its grants.
import { createHash } from "node:crypto";
import type { Kube } from "../kube";

export const POD_NAME_EXTRA = "authentication.kubernetes.io/pod-name";
export const POD_UID_EXTRA = "authentication.kubernetes.io/pod-uid";

export interface PodIdentity {
  namespace: string;
  name: string;
  uid: string;
  username: string;
}

export type AuthResult<T> =
  | { ok: true; value: T }
  | { ok: false; status: 401 | 403; reason: string };

/** The bearer token of an Authorization header, if any. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  return match?.[1];
}

const SA_USER = /^system:serviceaccount:([^:]+):([^:]+)$/;

interface Reviewed {
  username: string;
  groups: string[];
  extra: Record<string, string[]>;
}

type ReviewStatus = Awaited<ReturnType<Kube["authn"]["createTokenReview"]>>["status"];

/** The user a TokenReview authenticated, when it did (and for `audience`, if one was asked). */
function reviewedUser(status: ReviewStatus, audience: string | undefined): Reviewed | undefined {
  if (!status?.authenticated || !status.user?.username) return undefined;
  if (audience && !(status.audiences ?? []).includes(audience)) return undefined;
  const { username, groups = [], extra = {} } = status.user;
  return { username, groups, extra };
}

/** The pod a reviewed token is bound to (its service account's namespace, the pod-name/uid extras). */
function boundPod(
  reviewed: Reviewed,
): { namespace: string; name: string; uid: string } | undefined {
  const namespace = SA_USER.exec(reviewed.username)?.[1];
  const name = reviewed.extra[POD_NAME_EXTRA]?.[0];
  const uid = reviewed.extra[POD_UID_EXTRA]?.[0];
  return namespace && name && uid ? { namespace, name, uid } : undefined;
}

/** TokenReview results by token hash, for a short while: polls do not review every second. */
export class TokenReviewer {
  readonly #cache = new Map<string, { until: number; value: Reviewed }>();

  constructor(
    private readonly kube: Kube,
    private readonly ttlMs = 30_000,
  ) {}

  async review(token: string, audience: string | undefined): Promise<Reviewed | undefined> {
    const key = `${audience ?? ""}:${createHash("sha256").update(token).digest("hex")}`;
    const cached = this.#cache.get(key);
    if (cached && cached.until > Date.now()) return cached.value;
    const review = await this.kube.authn.createTokenReview({
      body: {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenReview",
        spec: audience ? { token, audiences: [audience] } : { token },
      },
    });
    const value = reviewedUser(review.status, audience);
    if (!value) return undefined;
    if (this.#cache.size > 10_000) this.#cache.clear();
    this.#cache.set(key, { until: Date.now() + this.ttlMs, value });
    return value;
  }
}

/**
 * The pod a token is bound to, when it is exactly the pod asked about (namespace, name, UID);
 * otherwise why not. A token of another pod, or a plain service-account token, is refused.
 */
export async function authenticatePod(
  reviewer: TokenReviewer,
  token: string | undefined,
  audience: string,
  asked: { namespace: string; name: string; uid?: string },
): Promise<AuthResult<PodIdentity>> {
  if (!token) return { ok: false, status: 401, reason: "no bearer token" };
  const reviewed = await reviewer.review(token, audience);
  if (!reviewed) {
    return { ok: false, status: 401, reason: `token not valid for audience ${audience}` };
  }
  const bound = boundPod(reviewed);
  if (!bound) return { ok: false, status: 403, reason: "token is not bound to a pod" };
  const { namespace, name, uid } = bound;
  const same =
    namespace === asked.namespace &&
    name === asked.name &&
    (asked.uid === undefined || uid === asked.uid);
  if (!same) {
    const wanted = `${asked.namespace}/${asked.name}${asked.uid ? ` (${asked.uid})` : ""}`;
    return {
      ok: false,
      status: 403,
      reason: `token is bound to pod ${namespace}/${name} (${uid}), not ${wanted}`,
    };
  }
  return { ok: true, value: { namespace, name, uid, username: reviewed.username } };
}

/** A caller that may patch the pod (the Pepr watcher, an operator), by its API-server token. */
export async function authorizePodPatcher(
  kube: Kube,
  reviewer: TokenReviewer,
  token: string | undefined,
  pod: { namespace: string; name: string },
): Promise<AuthResult<string>> {
  if (!token) return { ok: false, status: 401, reason: "no bearer token" };
  const reviewed = await reviewer.review(token, undefined);
  if (!reviewed) return { ok: false, status: 401, reason: "token not valid" };
  const review = await kube.authz.createSubjectAccessReview({
    body: {
      apiVersion: "authorization.k8s.io/v1",
      kind: "SubjectAccessReview",
      spec: {
        user: reviewed.username,
        groups: reviewed.groups,
        extra: reviewed.extra,
        resourceAttributes: {
          namespace: pod.namespace,
          name: pod.name,
          verb: "patch",
          resource: "pods",
        },
      },
    },
  });
  if (!review.status?.allowed) {
    return {
      ok: false,
      status: 403,
      reason: `${reviewed.username} may not patch pod ${pod.namespace}/${pod.name}`,
    };
  }
  return { ok: true, value: reviewed.username };
}
