// GatewayView → which key pairs each TLS host serves. Pure apart from parsing certificates with
// node:crypto. As Tengine-Ingress does: every Secret a `spec.tls` entry names for a host, one per
// key type (an ECDSA and an RSA pair together; the handshake picks by what the client offers), only
// pairs whose certificate covers the host. Oldest ingress first, like the routes.
import { createHash } from "node:crypto";
import type { V1Ingress } from "@kubernetes/client-node";
import { certificateCoversHost, inspectTlsPair, type KeyType } from "../../core/tls/certificate";
import { hostProblem } from "../../core/ingress/hostname";
import { formatErrors } from "../../core/result";
import { sortIngresses } from "../routing/compile";
import type { GatewayView, TlsPair } from "../view";

/** One loaded pair; `id` names the Secret and its content, so a rotated certificate gets a new id. */
export interface ServedPair {
  readonly id: string;
  readonly keyType: KeyType;
  readonly pair: TlsPair;
}

/** The pairs one host serves, at most one per key type. */
export interface CertificateSet {
  readonly id: string;
  readonly pairs: readonly ServedPair[];
}

export interface TlsTable {
  readonly exactHosts: ReadonlyMap<string, CertificateSet>;
  /** Keyed by the domain after "*.". */
  readonly wildcardHosts: ReadonlyMap<string, CertificateSet>;
}

export interface CompiledTls {
  table: TlsTable;
  problems: string[];
}

interface InspectedPair {
  pair: TlsPair;
  keyType: KeyType;
  dnsNames: string[];
  /** Secret name and a digest of its content. */
  id: string;
}

/** The certificate set for a server name: exact host, then one-label wildcard. */
export function findCertificates(table: TlsTable, serverName: string): CertificateSet | undefined {
  const exact = table.exactHosts.get(serverName);
  if (exact !== undefined) return exact;
  const dot = serverName.indexOf(".");
  return dot > 0 ? table.wildcardHosts.get(serverName.slice(dot + 1)) : undefined;
}

/**
 * Inspected key pairs kept from one compile to the next. Parsing a private key and checking it
 * against the certificate costs about 0.7 ms (RSA), so with 1000 TLS Secrets every change of any
 * Ingress cost 800 ms; now only new or changed pairs are parsed. An entry serves while its
 * Secret's cert and key text are unchanged and the time is inside the certificate's validity
 * (outside it, the pair is inspected again and the expiry reported); Secrets a compile did not
 * use are forgotten after it.
 */
export class PairInspections {
  private readonly entries = new Map<string, InspectedPair & { notBefore: Date; notAfter: Date }>();
  private readonly used = new Set<string>();

  inspect(secretKey: string, pair: TlsPair, now: Date): InspectedPair | string {
    this.used.add(secretKey);
    const hit = this.entries.get(secretKey);
    if (
      hit !== undefined &&
      hit.pair.cert === pair.cert &&
      hit.pair.key === pair.key &&
      now >= hit.notBefore &&
      now <= hit.notAfter
    ) {
      return hit.pair === pair ? hit : { ...hit, pair };
    }
    this.entries.delete(secretKey);
    const facts = inspectTlsPair(pair.cert, pair.key, now);
    if (!facts.ok) return `Secret ${secretKey}: ${formatErrors(facts.errors)}`;
    const digest = createHash("sha256").update(pair.cert).update("\0").update(pair.key);
    const inspected = {
      pair,
      keyType: facts.value.keyType,
      dnsNames: facts.value.dnsNames,
      id: `${secretKey}@${digest.digest("hex").slice(0, 16)}`,
      notBefore: facts.value.notBefore,
      notAfter: facts.value.notAfter,
    };
    this.entries.set(secretKey, inspected);
    return inspected;
  }

  /** Forgets the Secrets not inspected since the last call. */
  prune(): void {
    for (const key of this.entries.keys()) if (!this.used.has(key)) this.entries.delete(key);
    this.used.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}

class TlsCompiler {
  readonly problems: string[] = [];
  private readonly pairs = new Map<string, TlsPair>();
  private readonly inspected = new Map<string, InspectedPair | string>();
  private readonly hosts = new Map<string, InspectedPair[]>();

  constructor(
    pairs: readonly TlsPair[],
    private readonly now: Date,
    private readonly inspections: PairInspections,
  ) {
    for (const pair of pairs) this.pairs.set(`${pair.namespace}/${pair.name}`, pair);
  }

  addIngress(ingress: V1Ingress): void {
    const namespace = ingress.metadata?.namespace ?? "";
    const id = `${namespace}/${ingress.metadata?.name ?? ""}`;
    for (const [t, entry] of (ingress.spec?.tls ?? []).entries()) {
      const field = `${id}: spec.tls[${t}]`;
      const inspected = this.inspect(`${namespace}/${entry.secretName ?? ""}`);
      if (typeof inspected === "string") this.problems.push(`${field}.secretName: ${inspected}`);
      else this.addHosts(entry.hosts ?? [], inspected, field);
    }
  }

  private addHosts(hosts: string[], inspected: InspectedPair, field: string): void {
    for (const [h, host] of hosts.entries()) {
      const problem = this.addHost(host.toLowerCase(), inspected);
      if (problem !== undefined) this.problems.push(`${field}.hosts[${h}]: ${problem}`);
    }
  }

  build(): TlsTable {
    const exactHosts = new Map<string, CertificateSet>();
    const wildcardHosts = new Map<string, CertificateSet>();
    // Hosts with the same pairs share one set, so one SecureContext serves them all.
    const sets = new Map<string, CertificateSet>();
    for (const [host, pairs] of this.hosts) {
      const id = pairs.map(p => p.id).join(",");
      let set = sets.get(id);
      if (set === undefined) {
        set = { id, pairs: pairs.map(p => ({ id: p.id, keyType: p.keyType, pair: p.pair })) };
        sets.set(id, set);
      }
      if (host.startsWith("*.")) wildcardHosts.set(host.slice(2), set);
      else exactHosts.set(host, set);
    }
    return { exactHosts, wildcardHosts };
  }

  private addHost(host: string, inspected: InspectedPair): string | undefined {
    const problem = hostProblem(host);
    if (problem !== undefined) return `"${host}" ${problem}`;
    if (!certificateCoversHost(inspected, host)) {
      return `the certificate of ${inspected.pair.namespace}/${inspected.pair.name} does not cover "${host}" (names: ${inspected.dnsNames.join(", ") || "none"})`;
    }
    const list = this.hosts.get(host) ?? [];
    const same = list.find(p => p.keyType === inspected.keyType);
    if (same === inspected) return undefined;
    if (same !== undefined) {
      return `"${host}" already has an ${same.keyType} certificate from ${same.pair.namespace}/${same.pair.name}; one per key type`;
    }
    list.push(inspected);
    this.hosts.set(host, list);
    return undefined;
  }

  private inspect(secretKey: string): InspectedPair | string {
    const cached = this.inspected.get(secretKey);
    if (cached !== undefined) return cached;
    const pair = this.pairs.get(secretKey);
    let result: InspectedPair | string;
    if (pair === undefined) {
      result = `Secret ${secretKey} is not in the view (missing, or not a kubernetes.io/tls Secret)`;
    } else {
      result = this.inspections.inspect(secretKey, pair, this.now);
    }
    this.inspected.set(secretKey, result);
    return result;
  }
}

/** `inspections` carries parsed pairs over from the previous compile (the engine keeps one). */
export function compileTls(
  view: GatewayView,
  now: Date,
  inspections = new PairInspections(),
): CompiledTls {
  const compiler = new TlsCompiler(view.tlsPairs, now, inspections);
  for (const ingress of sortIngresses(view.ingresses)) compiler.addIngress(ingress);
  inspections.prune();
  return { table: compiler.build(), problems: compiler.problems };
}
