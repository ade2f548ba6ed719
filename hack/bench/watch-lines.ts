// How fast a watch stream's JSON lines are split and parsed (kube/api-client.ts jsonLines), against
// the naive peer it replaced: append each chunk to what is pending and search it for a newline
// from the start. Two streams, as the API server sends them in 16 KiB TLS records: 20 000 pod
// events of 4 KiB, and 50 objects of 1 MiB (a large ConfigMap or Secret).
//
//   npx tsx hack/bench/watch-lines.ts
import { jsonLines } from "../../kube/api-client";

type Splitter = (onLine: (line: unknown) => void) => (chunk: string) => void;

/** The peer: the splitter Bulwark used until 2026-12-07. */
const naive: Splitter = onLine => {
  let pending = "";
  return chunk => {
    pending += chunk;
    let end = pending.indexOf("\n");
    while (end >= 0) {
      const line = pending.slice(0, end);
      pending = pending.slice(end + 1);
      end = pending.indexOf("\n");
      if (line.trim() !== "") onLine(JSON.parse(line));
    }
  };
};

function stream(events: number, bytes: number): string[] {
  const line = (i: number) =>
    JSON.stringify({
      type: "MODIFIED",
      object: { metadata: { name: `o-${i}` }, data: "x".repeat(bytes) },
    });
  const text = Array.from({ length: events }, (_, i) => line(i) + "\n").join("");
  const records: string[] = [];
  for (let at = 0; at < text.length; at += 16_384) records.push(text.slice(at, at + 16_384));
  return records;
}

function ms(split: Splitter, records: readonly string[]): number {
  let lines = 0;
  const start = process.hrtime.bigint();
  const push = split(() => lines++);
  for (const record of records) push(record);
  if (lines === 0) throw new Error("no lines");
  return Number(process.hrtime.bigint() - start) / 1e6;
}

for (const [what, records] of [
  ["20 000 events of 4 KiB", stream(20_000, 4096)],
  ["50 objects of 1 MiB", stream(50, 1 << 20)],
] as const) {
  // Best of five each, alternating, after a warm-up of both.
  ms(jsonLines, records);
  ms(naive, records);
  const ours: number[] = [];
  const peer: number[] = [];
  for (let round = 0; round < 5; round++) {
    ours.push(ms(jsonLines, records));
    peer.push(ms(naive, records));
  }
  const [a, b] = [Math.min(...ours), Math.min(...peer)];
  console.log(
    `${what}: jsonLines ${a.toFixed(1)} ms, naive peer ${b.toFixed(1)} ms (${(b / a).toFixed(2)} × faster)`,
  );
}
