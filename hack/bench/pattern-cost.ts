// What a user-supplied pattern (canary-by-header-pattern, a use-regex path) costs the gateway on
// RE2's engine (core/patterns/linear-regex.ts): compiling it, keeping it in every worker, and one
// request's match against a header of 8 and 64 KiB; V8's backtracking RegExp on the same pattern
// and input is the peer where it finishes (on the hostile shapes it would not). Then one request
// on a host of hostile regex paths, with the per-request step budget and without it.
//
//   npx tsx hack/bench/pattern-cost.ts [--rounds 3]
//
// About 30 s. Run with `node --expose-gc --import tsx` for the retained sizes (otherwise "—").
import { parseArgs } from "node:util";
import { RE2JS } from "re2js";
import { compileLinear, MAX_PATTERN_INSTRUCTIONS } from "../../core/patterns/linear-regex";
import { seededRandom } from "../../test/harness/generate";
import { bestOf } from "./stats";
import { compileRoutes } from "../../gateway/routing/compile";
import { findRoute } from "../../gateway/routing/table";
import { ingress, view } from "../../gateway/routing/testkit";

const { values } = parseArgs({ options: { rounds: { type: "string" } } });
const ROUNDS = Number(values.rounds ?? 3);

const random = seededRandom(25);
const ab = (n: number) => Array.from({ length: n }, () => (random() < 0.5 ? "a" : "b")).join("");

interface Shape {
  name: string;
  source: string;
  /** A header value of `n` characters that the pattern does not match, at the most cost. */
  input(n: number): string;
  /** Whether V8's engine is run on it (false: it backtracks quadratically, seconds to minutes). */
  v8: boolean;
}

const SHAPES: Shape[] = [
  {
    name: "real: ^beta-[0-9]+$",
    source: "^beta-[0-9]+$",
    input: n => `beta-${"1".repeat(n - 6)}x`,
    v8: true,
  },
  {
    name: "real: (canary|beta|internal)-user",
    source: "(canary|beta|internal)-user",
    input: n => "canary-".repeat(Math.ceil(n / 7)).slice(0, n),
    v8: true,
  },
  {
    name: "hostile: (a|b)*a[ab]{50}c",
    source: "(a|b)*a[ab]{50}c",
    input: n => `c${ab(n - 1)}`,
    v8: false,
  },
  {
    name: "hostile: (a|b)*a[ab]{1000}c",
    source: "(a|b)*a[ab]{1000}c",
    input: n => `c${ab(n - 1)}`,
    v8: false,
  },
  {
    name: "hostile at the bound: [a-z]{1000} x4",
    source: "[a-z]{1000}".repeat(4),
    input: n => `${"a".repeat(3999)}-`.repeat(Math.ceil(n / 4000)).slice(0, n),
    v8: true,
  },
];

const gc = (globalThis as { gc?: () => void }).gc;

/**
 * KiB of heap one of `make`'s results keeps, after a collection, from `copies` of them (one
 * small program is lost in the heap's noise); undefined without --expose-gc.
 */
function retainedKiB(make: () => unknown, copies: number): number | undefined {
  if (gc === undefined) return undefined;
  gc();
  const before = process.memoryUsage().heapUsed;
  const kept = Array.from({ length: copies }, make);
  gc();
  const after = process.memoryUsage().heapUsed;
  return kept.length === copies ? (after - before) / 1024 / copies : undefined;
}

function main(): void {
  console.log(`Pattern costs, best of ${ROUNDS}, Node ${process.version}`);
  console.log(
    "| pattern | instructions | compile ms | retained KiB | 8 KiB match ms | V8 ms | 64 KiB match ms | V8 ms |",
  );
  console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
  for (const shape of SHAPES) {
    const pattern = compileLinear(shape.source);
    const compile = bestOf(ROUNDS, () => compileLinear(shape.source));
    const kept = retainedKiB(() => compileLinear(shape.source), 200);
    const v8 = new RegExp(shape.source);
    const cells = [8 * 1024, 64 * 1024].flatMap(n => {
      const input = shape.input(n);
      pattern.test(input); // the DFA's first states, as a worker's steady state has them
      const ours = bestOf(ROUNDS, () => pattern.test(input)).toFixed(2);
      return [ours, shape.v8 ? bestOf(ROUNDS, () => v8.test(input)).toFixed(3) : "not run"];
    });
    const retained = kept === undefined ? "—" : kept.toFixed(0);
    console.log(
      `| ${shape.name} | ${pattern.instructions} | ${compile.toFixed(2)} | ${retained} | ${cells.join(" | ")} |`,
    );
  }
  // What the bound refuses: a million instructions in 11 000 characters.
  const source = "[a-z]{1000}".repeat(1000);
  let program: RE2JS | undefined;
  const compile = bestOf(ROUNDS, () => (program = RE2JS.compile(source)));
  const kept = retainedKiB(() => RE2JS.compile(source), 1);
  console.log(
    `\nRefused (over ${MAX_PATTERN_INSTRUCTIONS} instructions): ${source.length} characters, ${program?.programSize()} instructions, compile ${compile.toFixed(0)} ms, retained ${kept === undefined ? "—" : (kept / 1024).toFixed(0)} MiB per worker.`,
  );
}

/**
 * One request on a host whose regex paths are one Ingress's ten hostile patterns (within every
 * bound): Bulwark's lookup, on MAX_MATCH_STEPS, against the peer that runs the host's patterns in
 * order until one matches, as the lookup did before the budget.
 */
function regexHost(): void {
  const P = "nginx.ingress.kubernetes.io/";
  const hostile = Array.from({ length: 10 }, (_, k) => ({
    path: `/${k}?(a|b)*a[ab]{1000}c`,
    service: "web",
  }));
  const table = compileRoutes(
    view(1, [
      ingress({
        name: "hostile",
        annotations: { [`${P}use-regex`]: "true" },
        rules: [{ host: "r.test", paths: hostile }],
      }),
      ingress({ name: "open", rules: [{ host: "r.test", paths: [{ path: "/", service: "o" }] }] }),
    ]),
  ).table;
  const regex = table.exactHosts.get("r.test")?.regex ?? [];
  console.log(
    `\nOne request on a regex host (ten paths of ${regex[0]?.pattern.instructions} instructions, one Ingress), the slowest of ${ROUNDS} requests, each a new random path (as an attacker sends: a repeated one finds the engine's DFA states cached):`,
  );
  console.log("| path length | Bulwark ms | answer | peer: every pattern in order, ms | answer |");
  console.log("| --- | --- | --- | --- | --- |");
  const slowest = (run: (path: string) => unknown, n: number) => {
    let worst = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const path = `/${ab(n - 1)}`;
      const started = performance.now();
      run(path);
      worst = Math.max(worst, performance.now() - started);
    }
    return worst;
  };
  const peer = (path: string) => regex.find(r => r.pattern.test(path));
  for (const n of [100, 200, 900, 4096, 8192]) {
    const ours = slowest(path => findRoute(table, "r.test", path), n);
    const found = findRoute(table, "r.test", `/${ab(n - 1)}`);
    const answer = found?.traffic?.refusalAnswer?.status ?? found?.ingress;
    const theirs = slowest(peer, n);
    const peerAnswer = peer(`/${ab(n - 1)}`)?.route.ingress ?? "default/open";
    console.log(`| ${n} | ${ours.toFixed(2)} | ${answer} | ${theirs.toFixed(1)} | ${peerAnswer} |`);
  }
}

main();
regexHost();
