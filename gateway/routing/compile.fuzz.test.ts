// Whatever a tenant writes, admission's review answers and the gateway's compile finishes: a throw
// in either stops more than the one Ingress (a compile that throws serves no change to any host,
// and a restarted gateway never becomes ready). Generated Ingresses carry random annotations from
// the whole catalog with plausible and hostile values, random paths and path types, and share
// hosts, so canaries find mains and regex hosts form.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { compileRoutes } from "./compile";
import { ingress, view } from "./testkit";
import { findRoute } from "./table";
import { ANNOTATION_CATALOG } from "../../core/annotations/catalog";
import { reviewIngress } from "../../core/ingress/review-ingress";
import { pick, seededRandom } from "../../test/harness/generate";
import type { V1Ingress } from "@kubernetes/client-node";

const KEYS = ANNOTATION_CATALOG.filter(entry => entry.support === "supported").map(e => e.key);
const CANARY = "nginx.ingress.kubernetes.io/canary";
const VALUES = [
  ...["true", "false", "True", "1", "0", "-1", "10", "100", "65536", "1.5", "1e309", "NaN", "0x10"],
  ...["10s", "1m", "5000ms", "100k", "1m", "8", "10r/s", "503", "404,503", "always", "never"],
  ...["/", "/a(b", "/$1", "$2", "/v1/$1/$2", "/x?y", "//", "~", "*", "a,b", ",", " ", "\t", ""],
  ...["https://auth.example.com/check", "http://$host/x?rd=$escaped_request_uri", "ftp://x"],
  ...["10.0.0.0/8", "10.0.0.0/8, 192.168.0.0/16", "0.0.0.0/0", "::/0", "10.0.0.0/33", "1.2.3.4"],
  ...["GET, POST", "X-Canary", "https://a.example.com", "cookie", "round_robin", "ewma"],
  ...["$request_uri", "$remote_addr", "^beta-[0-9]+$", "(a|b)*c", "(?=x)", "basic", "digest"],
  ...["auth", "other/auth", "sticky", "persistent", "balanced", "on", "off", "\u0000", "é", "%00"],
  ...["a".repeat(9000), "[a-z]{1000}".repeat(4), "${x}", "\\", '"', "{}", "[]", "null"],
];
const PATHS = ["/", "/api", "/a(b", "/x[", "/v[0-9]+", "/api(/|$)(.*)", "/ok/.*", "/a{2}", "/c)"];
const TYPES = ["Exact", "Prefix", "ImplementationSpecific"] as const;
const HOSTS = ["a.test", "b.test", "*.c.test"];

function randomIngress(random: () => number, index: number): V1Ingress {
  const annotations: Record<string, string> = {};
  const count = Math.floor(random() * 7);
  for (let k = 0; k < count; k++) annotations[pick(random, KEYS)] = pick(random, VALUES);
  if (random() < 0.25) annotations[CANARY] = "true";
  const rules = HOSTS.filter(() => random() < 0.5).map(host => ({
    host,
    paths: Array.from({ length: 1 + Math.floor(random() * 2) }, () => ({
      path: pick(random, PATHS),
      type: pick(random, TYPES),
      service: pick(random, ["web", "api"]),
    })),
  }));
  const tls = random() < 0.2 ? [{ hosts: ["a.test"], secretName: "a-tls" }] : undefined;
  const defaultBackend = random() < 0.1 ? { service: "web" } : undefined;
  return ingress({ name: `fuzz-${index}`, annotations, rules, tls, defaultBackend });
}

describe("compileRoutes and reviewIngress: generated Ingresses", () => {
  it("review every one of 3 000 and compile them in views of 6 without a throw", () => {
    const random = seededRandom(4242);
    let admitted = 0;
    for (let round = 0; round < 500; round++) {
      const ingresses = Array.from({ length: 6 }, (_, k) => randomIngress(random, round * 6 + k));
      for (const one of ingresses) {
        const review = reviewIngress(one, () => undefined);
        if (review.errors.length === 0) admitted++;
      }
      const compiled = compileRoutes(view(round, ingresses));
      for (const host of ["a.test", "b.test", "x.c.test", "other.test"]) {
        for (const path of ["/", "/api/v1", "/a(b", "/ok/x", "/V7"])
          findRoute(compiled.table, host, path);
      }
    }
    // The generator reaches both outcomes of the review.
    assert.ok(admitted > 100 && admitted < 2_900, `admitted ${admitted} of 3000`);
  });
});
