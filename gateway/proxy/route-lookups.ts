// A route found for a request that another path then serves: the fast path hands a limit-rate
// request to Node's HTTP server, and the h2 raw path leaves a stream it does not take to Node's
// compatibility layer. The next path takes the route found instead of looking it up again: on a
// regex host one lookup may spend the request's whole pattern budget (MAX_MATCH_STEPS), and a
// second would spend it again.
import type { Route } from "../routing/table";

interface Found {
  host: string | undefined;
  target: string;
  main: Route | undefined;
}

export class RouteLookups {
  /** By what carries the request on: the socket handed over, or the h2 stream. */
  readonly #found = new WeakMap<object, Found>();

  remember(
    carrier: object,
    host: string | undefined,
    target: string,
    main: Route | undefined,
  ): void {
    this.#found.set(carrier, { host, target, main });
  }

  /**
   * The route remembered for the request `carrier` brings next, taken once; undefined when there
   * is none for that host and target (look it up).
   */
  take(
    carrier: object,
    host: string | undefined,
    target: string,
  ): { main: Route | undefined } | undefined {
    const found = this.#found.get(carrier);
    if (found === undefined) return undefined;
    this.#found.delete(carrier);
    return found.host === host && found.target === target ? { main: found.main } : undefined;
  }
}
