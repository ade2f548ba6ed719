import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { rolloutChoice, type RolloutWord, type Serve } from "./rollout";

const P = "nginx.ingress.kubernetes.io/";

function rollout(word: RolloutWord, index: string | undefined, enabled = "true") {
  const annotations: Record<string, string> = { [`${P}${word}-rollout`]: enabled };
  if (index !== undefined) annotations[`${P}${word}-rollout-index-id`] = index;
  return annotations;
}

interface Row {
  title: string;
  word: RolloutWord;
  annotations: Record<string, string> | undefined;
  terminating?: boolean;
  ordinal: number;
  hasPrevious: boolean;
  serve: Serve;
  held: boolean;
}

const rows: Row[] = [
  {
    title: "no rollout annotations",
    word: "ingress",
    annotations: undefined,
    ordinal: 3,
    hasPrevious: true,
    serve: "latest",
    held: false,
  },
  {
    title: "rollout flag off",
    word: "ingress",
    annotations: rollout("ingress", "1", "false"),
    ordinal: 3,
    hasPrevious: true,
    serve: "latest",
    held: false,
  },
  {
    title: "index 1 reaches ordinal 0",
    word: "ingress",
    annotations: rollout("ingress", "1"),
    ordinal: 0,
    hasPrevious: true,
    serve: "latest",
    held: false,
  },
  {
    title: "index 1 holds ordinal 1 on its current revision",
    word: "ingress",
    annotations: rollout("ingress", "1"),
    ordinal: 1,
    hasPrevious: true,
    serve: "previous",
    held: true,
  },
  {
    title: "index 1, ordinal 1, a new object: served nowhere yet",
    word: "ingress",
    annotations: rollout("ingress", "1"),
    ordinal: 1,
    hasPrevious: false,
    serve: "none",
    held: true,
  },
  {
    title: "index 4 reaches ordinal 3",
    word: "ingress",
    annotations: rollout("ingress", "4"),
    ordinal: 3,
    hasPrevious: true,
    serve: "latest",
    held: false,
  },
  {
    title: "index -1 (done) reaches every ordinal",
    word: "ingress",
    annotations: rollout("ingress", "-1"),
    ordinal: 9,
    hasPrevious: true,
    serve: "latest",
    held: false,
  },
  {
    title: "flag without index (0): no pod applies",
    word: "ingress",
    annotations: rollout("ingress", undefined),
    ordinal: 0,
    hasPrevious: true,
    serve: "previous",
    held: true,
  },
  {
    title: "unknown ordinal (-1) never in a batch",
    word: "ingress",
    annotations: rollout("ingress", "5"),
    ordinal: -1,
    hasPrevious: true,
    serve: "previous",
    held: true,
  },
  {
    title: "terminating, in the batch: the delete applies",
    word: "ingress",
    annotations: rollout("ingress", "1"),
    terminating: true,
    ordinal: 0,
    hasPrevious: true,
    serve: "none",
    held: false,
  },
  {
    title: "terminating, outside the batch: keeps serving",
    word: "ingress",
    annotations: rollout("ingress", "1"),
    terminating: true,
    ordinal: 1,
    hasPrevious: true,
    serve: "previous",
    held: true,
  },
  {
    title: "terminating without rollout: the delete applies",
    word: "ingress",
    annotations: undefined,
    terminating: true,
    ordinal: 1,
    hasPrevious: true,
    serve: "none",
    held: false,
  },
  {
    title: "invalid index keeps the previous version",
    word: "ingress",
    annotations: rollout("ingress", "abc"),
    ordinal: 0,
    hasPrevious: true,
    serve: "previous",
    held: true,
  },
  {
    title: "secret-rollout on a Secret, in the batch",
    word: "secret",
    annotations: rollout("secret", "2"),
    ordinal: 1,
    hasPrevious: true,
    serve: "latest",
    held: false,
  },
  {
    title: "secret-rollout on a Secret, outside the batch",
    word: "secret",
    annotations: rollout("secret", "2"),
    ordinal: 2,
    hasPrevious: true,
    serve: "previous",
    held: true,
  },
  {
    title: "ingress-rollout annotations on a Secret are not its rollout",
    word: "secret",
    annotations: rollout("ingress", "0"),
    ordinal: 2,
    hasPrevious: true,
    serve: "latest",
    held: false,
  },
];

describe("rolloutChoice", () => {
  for (const row of rows) {
    it(`given ${row.title}, serves ${row.serve}`, () => {
      const choice = rolloutChoice(
        row.word,
        { annotations: row.annotations, terminating: row.terminating ?? false },
        row.ordinal,
        row.hasPrevious,
      );
      assert.equal(choice.serve, row.serve);
      assert.equal(choice.held !== undefined, row.held, choice.held);
    });
  }

  it("names the field of an invalid rollout annotation", () => {
    const choice = rolloutChoice(
      "ingress",
      { annotations: rollout("ingress", "abc"), terminating: false },
      0,
      false,
    );
    assert.match(choice.held ?? "", /ingress-rollout-index-id/);
  });
});
