// Admission and the gateway agree on regex hosts: whatever a sequence of writes admission lets
// through, the gateway serves every path of it (none left out for not being a regular expression).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { compileRoutes } from "./compile";
import { ingress, view } from "./testkit";
import { reviewIngress } from "../../core/ingress/review-ingress";
import { IngressesByHost, PathVerdicts, reviewRegexHosts } from "../../core/ingress/regex-hosts";
import { objectKey } from "../../core/object-key";
import { pick, seededRandom } from "../../test/harness/generate";
import type { V1Ingress } from "@kubernetes/client-node";

const P = "nginx.ingress.kubernetes.io/";
const PATHS = ["/", "/api", "/a(b", "/x[", "/v[0-9]+", "/c)", "/ok/.*", "/a{2}", "/(a|b)", "/z\\"];
const TYPES = ["Exact", "Prefix", "ImplementationSpecific"] as const;
const HOSTS = ["a.test", "b.test"];
const ANNOTATIONS: Record<string, string>[] = [
  {},
  {},
  { [`${P}use-regex`]: "true" },
  { [`${P}rewrite-target`]: "/" },
  // A canary's paths are never regexes; turned main, it makes its hosts regex.
  { [`${P}canary`]: "true", [`${P}use-regex`]: "true" },
];

function randomIngress(random: () => number, name: string): V1Ingress {
  const rules = HOSTS.filter(() => random() < 0.7).map(host => ({
    host,
    paths: Array.from({ length: 1 + Math.floor(random() * 3) }, () => ({
      path: pick(random, PATHS),
      type: pick(random, TYPES),
      service: "web",
    })),
  }));
  return ingress({ name, annotations: pick(random, ANNOTATIONS), rules });
}

/** Admission's verdict on one write: its own review and what it breaks on its hosts. */
function admits(write: V1Ingress, stored: Map<string, V1Ingress>, verdicts: PathVerdicts): boolean {
  const index = new IngressesByHost();
  for (const other of stored.values()) index.put(other);
  const key = objectKey(write);
  const own = reviewIngress(write, () => undefined);
  const hosts = reviewRegexHosts(write, stored.get(key), host => index.on(host, key), verdicts);
  return own.errors.length === 0 && hosts.errors.length === 0;
}

describe("regex hosts: admission and the gateway agree", () => {
  it("serves every path of whatever 400 random sequences of writes admission admits", () => {
    const random = seededRandom(20261207);
    const verdicts = new PathVerdicts();
    let refused = 0;
    let admitted = 0;
    for (let sequence = 0; sequence < 400; sequence++) {
      const stored = new Map<string, V1Ingress>();
      for (let step = 0; step < 10; step++) {
        const name = `ing-${Math.floor(random() * 4)}`;
        if (random() < 0.15) {
          stored.delete(`default/${name}`);
          continue;
        }
        const write = randomIngress(random, name);
        if (admits(write, stored, verdicts)) {
          stored.set(objectKey(write), write);
          admitted++;
        } else refused++;
      }
      const { problems } = compileRoutes(view(1, [...stored.values()]));
      const regexProblems = problems.filter(p => /regular expression/.test(p));
      assert.deepEqual(regexProblems, [], `sequence ${sequence}`);
    }
    // The generator reaches both outcomes, often.
    assert.ok(refused > 200 && admitted > 200, `refused ${refused}, admitted ${admitted}`);
  });
});
