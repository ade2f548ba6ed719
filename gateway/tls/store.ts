// Which SecureContext a new TLS connection gets, from the current TlsTable and what the client's
// ClientHello offers: the host's ECDSA certificate when the client can use it, else its RSA one.
// Contexts are made on first use and kept while a view still names that pair; a rotated
// certificate is a new pair, so it serves from the next handshake on while open connections keep
// the context they were made with.
import { X509Certificate } from "node:crypto";
import { createSecureContext, type SecureContext } from "node:tls";
import type { KeyType } from "../../core/tls/certificate";
import type { ClientHello } from "./client-hello";
import { findCertificates, type ServedPair, type TlsTable } from "./compile";
import type { PemPair } from "./default-certificate";

const EMPTY: TlsTable = { exactHosts: new Map(), wildcardHosts: new Map() };

interface Candidate {
  keyType: KeyType;
}

/** The pair a client can use: ECDSA first (smaller, faster), RSA next, else whatever there is. */
export function choosePair<T extends Candidate>(
  pairs: readonly T[],
  hello: ClientHello,
): T | undefined {
  const ecc = pairs.find(p => p.keyType === "ECC");
  const rsa = pairs.find(p => p.keyType === "RSA");
  if (ecc !== undefined && hello.acceptsEcdsa) return ecc;
  if (rsa !== undefined && hello.acceptsRsa) return rsa;
  return ecc ?? rsa;
}

function keyTypeOf(cert: string): KeyType {
  return new X509Certificate(cert).publicKey.asymmetricKeyType === "ec" ? "ECC" : "RSA";
}

interface DefaultContext {
  keyType: KeyType;
  context: SecureContext;
}

export class CertificateStore {
  private table: TlsTable = EMPTY;
  /** null: the pair failed to load (reported once), the default certificate serves instead. */
  private readonly contexts = new Map<string, SecureContext | null>();
  private readonly defaults: DefaultContext[];
  readonly failures: string[] = [];

  constructor(defaultCertificates: readonly PemPair[]) {
    this.defaults = defaultCertificates.map(pair => ({
      keyType: keyTypeOf(pair.cert),
      context: createSecureContext({ key: pair.key, cert: pair.cert }),
    }));
  }

  swap(table: TlsTable): void {
    this.table = table;
    const live = new Set<string>();
    const collect = (pairs: readonly ServedPair[]) => {
      for (const pair of pairs) live.add(pair.id);
    };
    for (const set of table.exactHosts.values()) collect(set.pairs);
    for (const set of table.wildcardHosts.values()) collect(set.pairs);
    for (const id of this.contexts.keys()) if (!live.has(id)) this.contexts.delete(id);
  }

  /** The context for a connection; undefined only when there is no default certificate either. */
  contextFor(hello: ClientHello): SecureContext | undefined {
    const set =
      hello.serverName === undefined ? undefined : findCertificates(this.table, hello.serverName);
    const pair = set === undefined ? undefined : choosePair(set.pairs, hello);
    const context = pair === undefined ? undefined : this.load(pair);
    return context ?? choosePair(this.defaults, hello)?.context;
  }

  private load(served: ServedPair): SecureContext | undefined {
    let context = this.contexts.get(served.id);
    if (context === undefined) {
      try {
        context = createSecureContext({ key: served.pair.key, cert: served.pair.cert });
      } catch (error) {
        this.failures.push(`${served.id}: ${(error as Error).message}`);
        context = null;
      }
      this.contexts.set(served.id, context);
    }
    return context ?? undefined;
  }
}
