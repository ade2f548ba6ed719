// server-alias and from-to-www-redirect: names a host answers to beyond its rules' hosts, placed
// after every rule is in, because a real host rule always wins over them (ingress-nginx's
// createServers drops an alias that is some server's hostname; BuildRedirects skips a www
// counterpart that is one). The oldest Ingress of a host that sets aliases gives the host's
// aliases (ingress-nginx: "Aliases already configured for server"); a name two hosts claim goes
// to the first claim, oldest Ingress first.
import { wwwCounterpart } from "../../core/annotations";
import { wwwRedirectPolicy, type TrafficOptions } from "../policy/route-traffic";
import { Backend, type HostRoutes, type Route } from "./table";

interface HostMaps {
  exactHosts: Map<string, HostRoutes>;
  wildcardHosts: Map<string, HostRoutes>;
}

interface Claimant {
  readonly id: string;
  readonly annotations:
    | { hostNames?: { aliases: readonly string[]; fromToWwwRedirect: boolean } | undefined }
    | undefined;
  readonly policy: Route["policy"];
}

/** The map and key a host name lives under ("*.x" under wildcards as "x"). */
function slot(maps: HostMaps, name: string): [Map<string, HostRoutes>, string] {
  return name.startsWith("*.") ? [maps.wildcardHosts, name.slice(2)] : [maps.exactHosts, name];
}

export class ExtraNames {
  /** host → its aliases and the Ingress that gave them. */
  private readonly aliases = new Map<string, { id: string; names: readonly string[] }>();
  /** host → the first Ingress asking for its www redirect. */
  private readonly www = new Map<string, Claimant>();

  /** Notes what an Ingress with a rule for `host` asks for (called oldest Ingress first). */
  note(claimant: Claimant, host: string): void {
    const config = claimant.annotations?.hostNames;
    if (config === undefined || host === "") return;
    if (config.aliases.length > 0 && !this.aliases.has(host)) {
      this.aliases.set(host, { id: claimant.id, names: config.aliases });
    }
    if (config.fromToWwwRedirect && !this.www.has(host)) this.www.set(host, claimant);
  }

  /** Adds the aliases, then the www redirects, to the built host maps; returns what was left out. */
  place(maps: HostMaps, traffic: TrafficOptions): { redirects: number; problems: string[] } {
    const real = new Set([
      ...maps.exactHosts.keys(),
      ...[...maps.wildcardHosts.keys()].map(k => `*.${k}`),
    ]);
    const problems: string[] = [];
    for (const [host, { id, names }] of this.aliases) {
      const [hostMap, hostKey] = slot(maps, host);
      const routes = hostMap.get(hostKey);
      if (routes === undefined) continue;
      for (const alias of names) {
        const [map, key] = slot(maps, alias);
        if (alias === host) continue;
        if (real.has(alias)) {
          problems.push(
            `${id}: metadata.annotations: server-alias "${alias}" is a host of an Ingress rule; ignored`,
          );
          continue;
        }
        if (map.has(key)) {
          problems.push(
            `${id}: metadata.annotations: server-alias "${alias}" is already an alias of another host; ignored`,
          );
          continue;
        }
        map.set(key, routes);
      }
    }
    let redirects = 0;
    for (const [host, claimant] of this.www) {
      const from = wwwCounterpart(host);
      if (from === undefined || maps.exactHosts.has(from)) continue;
      maps.exactHosts.set(from, wwwRedirectRoutes(claimant, from, host, traffic));
      redirects++;
    }
    return { redirects, problems };
  }
}

/** A host whose every request is redirected to `to`. */
function wwwRedirectRoutes(
  claimant: Claimant,
  from: string,
  to: string,
  traffic: TrafficOptions,
): HostRoutes {
  const route: Route = {
    ingress: claimant.id,
    host: from,
    path: "/",
    kind: "Prefix",
    match: "",
    backend: new Backend(`${claimant.id} (from-to-www-redirect)`, []),
    policy: claimant.policy,
    annotations: undefined,
    canaries: [],
    refusal: undefined,
    traffic: wwwRedirectPolicy(to, traffic),
  };
  return { exact: undefined, regex: undefined, prefixes: [route], fallback: undefined };
}
