// inspectTlsPair remembered per pair text: parsing the private key and the certificate was the
// largest share of an Ingress admission's CPU (hack/bench/README.md, admission), and the same
// Secret is read for every Ingress that names it. A remembered pair is used only while `now` is
// inside its validity period, so the answer is the one inspectTlsPair would give; failures are
// not remembered (they are rare, and their message may depend on the time).
import { ok, type Result } from "../result";
import { inspectTlsPair, type CertificateFacts } from "./certificate";

export class InspectionCache {
  private readonly entries = new Map<string, CertificateFacts>();

  constructor(private readonly maxEntries = 1024) {}

  inspect(certPem: string, keyPem: string, now: Date | undefined): Result<CertificateFacts> {
    const key = `${certPem}\0${keyPem}`;
    const hit = this.entries.get(key);
    if (hit !== undefined && (now === undefined || (now >= hit.notBefore && now <= hit.notAfter))) {
      // Least recently used goes first: a hit moves to the end.
      this.entries.delete(key);
      this.entries.set(key, hit);
      return ok(hit);
    }
    const result = inspectTlsPair(certPem, keyPem, now);
    this.entries.delete(key);
    if (!result.ok) return result;
    this.entries.set(key, result.value);
    if (this.entries.size > this.maxEntries) {
      this.entries.delete(this.entries.keys().next().value!);
    }
    return result;
  }

  get size(): number {
    return this.entries.size;
  }
}
