// The TLS Secrets' pairs, kept from a watch in the admission process. Each Ingress review read the
// Secrets it names from the API server's cache: a round trip inside the API server's webhook call,
// which made an Ingress's call about 2.5 ms longer than a TLS Secret's (hack/bench/README.md,
// admission). An approval may rest on a copy a moment behind the API server, as it did on the
// cache's, and the gateway checks every pair again before it serves it; a refusal is decided again
// on what etcd holds (refusedOnlyOnLatest). A Secret the watch does not hold (created a moment ago,
// or the watch not listed yet) is read as before.
import { TLS_SECRET_TYPE } from "../../core/ingress/selection";
import type { Secret } from "../../core/ingress/types";
import { startedOnFirstUse, type ListWatchOf, type Watched } from "../../kube/list-watch";
import { moduleListWatch } from "../pepr/watches";
import { SECRETS, resourcePath } from "../../kube/api-paths";
import { namespacedName, objectKey } from "../../core/object-key";

/** A pair as its Secret stores it, decoded: what the certificate inspection reads. */
export interface TlsPair {
  certPem: string;
  keyPem: string;
}

function decode(value: string | undefined): string {
  return value === undefined ? "" : Buffer.from(value, "base64").toString("utf8");
}

/** The pair a Secret read from the API server stores (base64 data), decoded. */
export function pairOf(secret: Secret): TlsPair {
  return { certPem: decode(secret.data?.["tls.crt"]), keyPem: decode(secret.data?.["tls.key"]) };
}

/** The pair of each TLS Secret by namespace and name; pure, fed by the watch. */
export class TlsPairIndex {
  readonly #pairs = new Map<string, TlsPair>();

  put(secret: Secret): void {
    const own = objectKey(secret);
    // The watch selects the type; a Secret of another type is never a TLS Secret's copy.
    if (secret.type !== TLS_SECRET_TYPE) return void this.#pairs.delete(own);
    this.#pairs.set(own, pairOf(secret));
  }

  /** A full list: what it holds, and nothing else. */
  replaceAll(secrets: readonly Secret[]): void {
    this.#pairs.clear();
    for (const secret of secrets) this.put(secret);
  }

  remove(secret: Secret): void {
    this.#pairs.delete(objectKey(secret));
  }

  get(namespace: string, name: string): TlsPair | undefined {
    return this.#pairs.get(namespacedName(namespace, name));
  }

  get size(): number {
    return this.#pairs.size;
  }
}

/** The index and the watch that feeds it, started on first use. */
export class WatchedTlsPairs {
  readonly index = new TlsPairIndex();
  readonly #watch: () => unknown;

  /** `listWatch`: the TLS Secrets' (all namespaces, the default kubeconfig's cluster). */
  constructor(listWatch: ListWatchOf<Secret> = tlsSecretListWatch) {
    this.#watch = startedOnFirstUse(() => listWatch(this.index, "(admission)"));
  }

  /** The pair the watch holds; undefined says nothing (read the Secret). */
  pair(namespace: string, name: string): TlsPair | undefined {
    this.#watch();
    return this.index.get(namespace, name);
  }
}

export const TLS_ONLY = `type=${TLS_SECRET_TYPE}`;

/** Every TLS Secret: the field selector keeps every other Secret out of the process. */
export const TLS_SECRETS: Watched = {
  path: resourcePath(SECRETS),
  what: "secrets of type kubernetes.io/tls",
  fieldSelector: TLS_ONLY,
};

/** The TLS Secrets into `feed`, which keeps what it reads (TlsPairIndex: the pairs). */
export const tlsSecretListWatch: ListWatchOf<Secret> = (feed, who, options) =>
  moduleListWatch({ ...TLS_SECRETS, what: `${TLS_SECRETS.what} ${who}` }, feed, options);

export const watchedTlsPairs = new WatchedTlsPairs();
