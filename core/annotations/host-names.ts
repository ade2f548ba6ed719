// ingress-nginx `server-alias` (internal/ingress/annotations/alias) and `from-to-www-redirect`
// (internal/ingress/annotations/redirect): more names for the hosts of an Ingress. nginx also takes
// regular expressions and suffix wildcards in server_name; Bulwark matches hosts by name, so an
// alias must be a host name as an Ingress rule's host is (a leading "*." wildcard allowed).
import { z } from "zod";
import { parseFamily, type Family } from "./family";
import { hostProblem } from "../ingress/hostname";
import { annotation, good, parseBool, parseList, type Parsed } from "./validators";
import type { Result } from "../result";

const fields = {
  serverAlias: {
    annotation: "server-alias",
    type: "host list",
    default: "",
    doc: 'More host names, "," separated, served by the same rules as the Ingress\'s hosts; an alias never takes a host that an Ingress rule names.',
  },
  fromToWwwRedirect: {
    annotation: "from-to-www-redirect",
    type: "boolean",
    default: "false",
    doc: 'Redirect "www.<host>" to "<host>" (or "<host>" to "www.<host>" when the rule\'s host starts with "www.") with 308, unless an Ingress has a rule for it (default false).',
  },
} as const;

const MAX_ALIASES = 100;

/** The aliases, lower case, without duplicates, sorted (as ingress-nginx sorts them). */
export function parseAliases(raw: string): Parsed<string[]> {
  const list = parseList(raw, {
    expected: `host names separated by ","`,
    separator: ",",
    max: MAX_ALIASES,
    trim: true,
    entryProblem: entry =>
      entry.startsWith("~")
        ? "is a regular expression, which Bulwark does not match host names with"
        : hostProblem(entry.toLowerCase()),
  });
  if (!list.ok) return list;
  return good([...new Set(list.value.map(alias => alias.toLowerCase()))].sort());
}

export const hostNamesSchema = z
  .object({
    serverAlias: annotation(parseAliases).optional(),
    fromToWwwRedirect: annotation(parseBool).optional(),
  } satisfies Record<keyof typeof fields, z.ZodType>)
  .transform(v => ({
    aliases: v.serverAlias ?? [],
    fromToWwwRedirect: v.fromToWwwRedirect ?? false,
  }));

export type HostNamesConfig = z.output<typeof hostNamesSchema>;

export const hostNamesFamily: Family<HostNamesConfig, keyof typeof fields> = {
  name: "host-names",
  fields,
  schema: hostNamesSchema,
};

export function parseHostNames(
  annotations: Readonly<Record<string, string>> | undefined,
): Result<HostNamesConfig | undefined> {
  return parseFamily(hostNamesFamily, annotations);
}

/** The other name of from-to-www-redirect: "www.x" for "x", "x" for "www.x"; none for wildcards. */
export function wwwCounterpart(host: string): string | undefined {
  if (host === "" || host.startsWith("*.")) return undefined;
  return host.startsWith("www.") ? host.slice(4) : `www.${host}`;
}
