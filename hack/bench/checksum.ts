// Checksum benchmark (`npx tsx hack/bench/checksum.ts`): 100k Ingresses and 1k TLS Secrets.
// Measures, in one run, against the DESIGN.md targets:
//   full verify   IDs + checksum + compare, one shot, in tengine and content mode    ≤ 1 s
//   incremental   ChecksumTracker: upsert one changed Ingress, verify               ≤ 5 ms
//   naive         the peer: recompute every Ingress ID and the checksum after each change
// Certificates are real: a few wildcard certificates made with openssl up front, cycled over the
// 1k Secrets; every Secret's certificate is decoded from base64 and parsed on its own.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  ChecksumTracker,
  checksumOfIds,
  computeChecksum,
  type ChecksumKind,
  type ChecksumMode,
  type IngressLike,
  type ObjectOf,
  type SecretLike,
} from "../../core/checksum";

const INGRESSES = 100_000;
const SECRETS = 1_000;
const CERTIFICATES = 20;
const FULL_RUNS = 3;
const CHANGES = 200;
const NAIVE_RUNS = 5;
const VERSION = "nginx.ingress.kubernetes.io/version";

interface Certificate {
  cert: string;
  key: string;
}

function makeCertificates(dir: string): Certificate[] {
  const certificates: Certificate[] = [];
  for (let i = 0; i < CERTIFICATES; i++) {
    // Half RSA-2048, half P-256: both are common in wildcard certificates.
    const key =
      i % 2 === 0
        ? ["-newkey", "rsa:2048"]
        : ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"];
    const zone = `zone-${i}.example.com`;
    execFileSync("openssl", [
      "req", "-x509", ...key, "-nodes", "-days", "30", "-subj", `/CN=*.${zone}`,
      "-addext", `subjectAltName=DNS:*.${zone},DNS:${zone}`,
      "-keyout", join(dir, `${i}.key`), "-out", join(dir, `${i}.crt`),
    ], { stdio: ["ignore", "ignore", "pipe"] }); // prettier-ignore
    certificates.push({
      cert: readFileSync(join(dir, `${i}.crt`), "utf8"),
      key: readFileSync(join(dir, `${i}.key`), "utf8"),
    });
  }
  return certificates;
}

/**
 * Ingress i as the API server returns it: struct fields in Go's order, map keys sorted, parsed
 * from JSON (as every client hands objects over), with the server fields content mode ignores.
 */
function ingress(
  i: number,
  version: number,
  host = `site-${i}.zone-${i % CERTIFICATES}.example.com`,
): IngressLike {
  const spec = {
    ingressClassName: "bulwark",
    tls: [{ hosts: [host], secretName: `tls-${i % SECRETS}` }],
    rules: [
      {
        host,
        http: {
          paths: [
            {
              path: "/",
              pathType: "Prefix",
              backend: { service: { name: `site-${i}`, port: { number: 8080 } } },
            },
          ],
        },
      },
    ],
  };
  const object = {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: {
      name: `cluster-site-${i}`,
      namespace: `team-${i % 500}`,
      uid: `00000000-0000-0000-0000-${String(i).padStart(12, "0")}`,
      resourceVersion: String(1000 + i),
      generation: 1,
      creationTimestamp: "2025-01-01T00:00:00Z",
      annotations: {
        "kubectl.kubernetes.io/last-applied-configuration": JSON.stringify({ spec }),
        "nginx.ingress.kubernetes.io/proxy-read-timeout": "60",
        "nginx.ingress.kubernetes.io/ssl-redirect": "true",
        [VERSION]: String(version),
      },
    },
    spec,
    status: { loadBalancer: {} },
  };
  return JSON.parse(JSON.stringify(object));
}

function secret(i: number, certificate: Certificate): SecretLike {
  return {
    metadata: { name: `tls-${i}`, namespace: `team-${i % 500}`, annotations: { [VERSION]: "3" } },
    type: "kubernetes.io/tls",
    data: {
      "tls.crt": Buffer.from(certificate.cert).toString("base64"),
      "tls.key": Buffer.from(certificate.key).toString("base64"),
    },
  };
}

function millis(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e6;
}

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

interface Row {
  what: string;
  runs: number;
  median: number;
  p99: number;
  target?: number;
}

function row(what: string, samples: number[], target?: number): Row {
  return {
    what,
    runs: samples.length,
    median: percentile(samples, 50),
    p99: percentile(samples, 99),
    target,
  };
}

/** Full verify in one shot: every ID, both checksums, compared with the published ones. */
function fullVerify(
  mode: ChecksumMode,
  ingresses: IngressLike[],
  secrets: SecretLike[],
  published: [string, string],
): number {
  const start = process.hrtime.bigint();
  const ing = computeChecksum("Ingress", mode, ingresses);
  const sec = computeChecksum("Secret", mode, secrets);
  const elapsed = millis(start);
  if (ing.checksum !== published[0] || sec.checksum !== published[1])
    throw new Error("full verify: mismatch");
  if (sec.skipped.length > 0) throw new Error(`secrets skipped: ${sec.skipped[0]?.reason}`);
  return elapsed;
}

function trackerOf<K extends ChecksumKind>(
  kind: K,
  mode: ChecksumMode,
  objects: ObjectOf<K>[],
): ChecksumTracker<K> {
  const tracker = new ChecksumTracker(kind, mode);
  for (const object of objects)
    tracker.upsert(`${object.metadata?.namespace}/${object.metadata?.name}`, object);
  return tracker;
}

/** A changed copy of Ingress i: a new version in tengine mode, a new host in content mode. */
function changedIngress(mode: ChecksumMode, i: number): IngressLike {
  return mode === "tengine" ? ingress(i, 2) : ingress(i, 1, `moved-${i}.example.com`);
}

/** Change one Ingress, verify, revert it, verify: each step timed, each outcome checked. */
function incremental(
  mode: ChecksumMode,
  ingresses: IngressLike[],
  tracker: ChecksumTracker<"Ingress">,
): number[] {
  const samples: number[] = [];
  let state = 12345;
  for (let k = 0; k < CHANGES / 2; k++) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    const i = state % ingresses.length;
    const key = `team-${i % 500}/cluster-site-${i}`;
    for (const [object, expected] of [
      [changedIngress(mode, i), false],
      [ingresses[i], true],
    ] as const) {
      const start = process.hrtime.bigint();
      tracker.upsert(key, object ?? {});
      const verification = tracker.verify();
      samples.push(millis(start));
      if (verification.consistent !== expected)
        throw new Error(`incremental: expected ${expected}`);
    }
  }
  return samples;
}

/** The naive peer: after one change, recompute all Ingress IDs and the checksum, and compare. */
function naive(mode: ChecksumMode, ingresses: IngressLike[], published: string): number[] {
  const samples: number[] = [];
  for (let run = 0; run < NAIVE_RUNS; run++) {
    const i = (run * 7919) % ingresses.length;
    const current = ingresses.map((object, j) => (j === i ? changedIngress(mode, i) : object));
    const start = process.hrtime.bigint();
    const consistent = computeChecksum("Ingress", mode, current).checksum === published;
    samples.push(millis(start));
    if (consistent) throw new Error("naive: a change went unnoticed");
  }
  return samples;
}

function timed<T>(work: () => T): [T, number] {
  const start = process.hrtime.bigint();
  const result = work();
  return [result, millis(start)];
}

function benchMode(mode: ChecksumMode, ingresses: IngressLike[], secrets: SecretLike[]): Row[] {
  const ing = computeChecksum("Ingress", mode, ingresses);
  const sec = computeChecksum("Secret", mode, secrets);
  const full = Array.from({ length: FULL_RUNS }, () =>
    fullVerify(mode, ingresses, secrets, [ing.checksum, sec.checksum]),
  );

  const [tracker, load] = timed(() => trackerOf("Ingress", mode, ingresses));
  const [, publish] = timed(() =>
    tracker.publish({
      name: "cs-1",
      checksum: checksumOfIds(ing.ids, mode),
      ids: ing.ids,
      order: "t1",
    }),
  );
  if (!tracker.verify().consistent) throw new Error("tracker: not consistent after publish");
  const rows = [
    row(`${mode}: full verify, ${INGRESSES / 1000}k ing + ${SECRETS / 1000}k certs`, full, 1000),
    row(`${mode}: tracker load, ${INGRESSES / 1000}k ingresses`, [load]),
    row(`${mode}: publish a checksum object (${INGRESSES / 1000}k ids)`, [publish]),
    row(`${mode}: incremental re-verify, 1 change`, incremental(mode, ingresses, tracker), 5),
  ];
  if (mode === "tengine") {
    // A Tengine producer may publish no ids: then each verify hashes the sorted current IDs.
    const fallback = trackerOf("Ingress", mode, ingresses);
    fallback.publish({ name: "cs-no-ids", checksum: ing.checksum, order: "t1" });
    rows.push(
      row(`${mode}: incremental, published without ids`, incremental(mode, ingresses, fallback)),
    );
  }
  rows.push(row(`${mode}: naive re-verify, 1 change`, naive(mode, ingresses, ing.checksum)));
  return rows;
}

function format(rows: Row[]): string {
  const lines = [["what", "runs", "median ms", "p99 ms", "target ms", ""]];
  for (const r of rows) {
    const verdict = r.target === undefined ? "" : r.p99 <= r.target ? "ok" : "OVER";
    lines.push([
      r.what,
      String(r.runs),
      r.median.toFixed(3),
      r.p99.toFixed(3),
      r.target === undefined ? "" : `≤ ${r.target}`,
      verdict,
    ]);
  }
  const widths = lines[0]?.map((_, c) => Math.max(...lines.map(l => (l[c] ?? "").length))) ?? [];
  return lines
    .map(l =>
      l
        .map((cell, c) => (c === 0 ? cell.padEnd(widths[c] ?? 0) : cell.padStart(widths[c] ?? 0)))
        .join("  "),
    )
    .join("\n");
}

function ratio(rows: Row[], mode: ChecksumMode): string {
  const find = (prefix: string) => rows.find(r => r.what.startsWith(`${mode}: ${prefix}`));
  const naiveRow = find("naive");
  const incrementalRow = find("incremental re-verify");
  if (!naiveRow || !incrementalRow) return "";
  return `${mode}: naive / incremental (medians) = ${(naiveRow.median / incrementalRow.median).toFixed(0)}x`;
}

function main(): void {
  const dir = mkdtempSync(join(tmpdir(), "bulwark-bench-checksum-"));
  try {
    const [certificates, certMs] = timed(() => makeCertificates(dir));
    const ingresses = Array.from({ length: INGRESSES }, (_, i) => ingress(i, 1));
    const secrets = Array.from({ length: SECRETS }, (_, i) =>
      secret(i, certificates[i % CERTIFICATES] as Certificate),
    );
    console.log(
      `checksum benchmark: ${INGRESSES} Ingresses, ${SECRETS} TLS Secrets; Node ${process.version}\n` +
        `certificates: ${CERTIFICATES} real openssl wildcard certificates (half RSA-2048, half P-256, ` +
        `made in ${(certMs / 1000).toFixed(1)} s, not timed) cycled over the ${SECRETS} Secrets; ` +
        `each Secret's certificate is decoded and parsed on its own\n` +
        `full verify: ${FULL_RUNS} runs (the first is cold); incremental: ${CHANGES} changes ` +
        `(change + revert pairs); naive: ${NAIVE_RUNS} runs\n`,
    );
    const rows = [
      ...benchMode("tengine", ingresses, secrets),
      ...benchMode("content", ingresses, secrets),
    ];
    console.log(format(rows));
    console.log(`\n${ratio(rows, "tengine")}\n${ratio(rows, "content")}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main();
