// The admission process's one watch of every Ingress, feeding what reviews read of other
// Ingresses: which name a TLS Secret, and which share a host. An answer a moment behind the API
// server is good enough for both: the Secret webhook fails open and the gateway re-validates every
// pair it serves; a path a regex host breaks is left out by the gateway and reported. Until the
// first list has arrived, the TLS users are read from the API server instead, and regex hosts
// are not checked.
import type { Ingress } from "../../core/ingress/types";
import { IngressesByHost } from "../../core/ingress/regex-hosts";
import { startedOnFirstUse, type ListWatch, type ListWatchOf } from "../../kube/list-watch";
import { INGRESSES, resourcePath } from "../../kube/api-paths";
import { moduleListWatch } from "../pepr/watches";
import { TlsUsersIndex } from "./tls-users";

/** Every Ingress into `feed`, which keeps what it reads. */
export const ingressListWatch: ListWatchOf<Ingress> = (feed, who, options) =>
  moduleListWatch({ path: resourcePath(INGRESSES), what: `ingresses ${who}` }, feed, options);

/** The indexes and the watch that feeds them, started on first use. */
export class WatchedIngresses {
  readonly tlsUsers = new TlsUsersIndex();
  readonly byHost = new IngressesByHost();
  readonly #watch: () => ListWatch<Ingress>;

  /** `listWatch`: the Ingresses' (all namespaces, the default kubeconfig's cluster). */
  constructor(listWatch: ListWatchOf<Ingress> = ingressListWatch) {
    const indexes = [this.tlsUsers, this.byHost];
    const feed = {
      put: (ingress: Ingress) => indexes.forEach(index => index.put(ingress)),
      remove: (ingress: Ingress) => indexes.forEach(index => index.remove(ingress)),
    };
    this.#watch = startedOnFirstUse(() => listWatch(feed, "(admission)"));
  }

  /** The Ingresses naming the Secret, or undefined until a list has arrived (start it then). */
  usersOf(namespace: string, secretName: string): Ingress[] | undefined {
    return this.#listed() ? this.tlsUsers.users(namespace, secretName) : undefined;
  }

  /** The Ingresses with a rule on `host` but `except` (namespace/name); undefined until listed. */
  onHost(host: string, except: string): Ingress[] | undefined {
    return this.#listed() ? this.byHost.on(host, except) : undefined;
  }

  // Not start()'s promise: it resolves after a list that failed too (an "error" event).
  #listed(): boolean {
    return this.#watch().listed;
  }
}

export const watchedIngresses = new WatchedIngresses();
