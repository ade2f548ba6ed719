// The copies Pepr makes of each admission review, as Bulwark's processes run them
// (capabilities/pepr/linear-clone.ts: the structured clone algorithm) against ramda's clone, which
// Pepr 1.1.4 calls (the peer): a pod's CREATE review with the API server's managed fields, for a
// pod with N env vars. A mutation copies the object twice, a validation once.
//
//   npx tsx hack/bench/pepr-clone.ts [--env 10,100,1000,5000,10000] [--rounds 5]
//
// About 1 min (ramda's copies of the larger pods are most of it). Prints the best of the rounds.
import { parseArgs } from "node:util";
import { linearClones, peprRamda } from "../../capabilities/pepr/linear-clone";
import { podReview } from "../../test/fixtures/pod-review";
import { bestOf } from "./stats";

const { values } = parseArgs({
  options: { env: { type: "string" }, rounds: { type: "string" } },
});
const SIZES = (values.env ?? "10,100,1000,5000,10000").split(",").map(Number);
const ROUNDS = Number(values.rounds ?? 5);

function main(): void {
  const ramda = { clone: peprRamda().clone };
  const peer = ramda.clone;
  linearClones(ramda);
  const linear = ramda.clone;
  console.log(
    `One copy of a pod's CREATE review (object with managed fields), best of ${ROUNDS}, Node ${process.version}`,
  );
  console.log(
    `${"env vars".padStart(9)} ${"JSON KiB".padStart(9)} ${"ramda ms".padStart(10)} ${"linear ms".padStart(10)} ${"ratio".padStart(8)}`,
  );
  for (const env of SIZES) {
    const object = podReview(env).object;
    const kib = JSON.stringify(object).length / 1024;
    const slow = bestOf(ROUNDS, () => peer(object));
    const fast = bestOf(ROUNDS, () => linear(object));
    console.log(
      `${String(env).padStart(9)} ${kib.toFixed(0).padStart(9)} ${slow.toFixed(3).padStart(10)} ${fast.toFixed(3).padStart(10)} ${(slow / fast).toFixed(1).padStart(8)}`,
    );
  }
}

main();
