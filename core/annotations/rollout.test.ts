import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { annotationPath } from "./family";
import {
  parseIngressRollout,
  parseSecretRollout,
  podOrdinalFromName,
  rolloutApplies,
  type RolloutConfig,
  type RolloutWord,
} from "./rollout";
import { annotationKey, quote } from "./validators";

const PARSERS = { ingress: parseIngressRollout, secret: parseSecretRollout };

// Both words run the same table: one schema, parametrized by the prefix word.
for (const word of ["ingress", "secret"] as const satisfies readonly RolloutWord[]) {
  const key = (suffix: string) => annotationKey(`${word}-rollout${suffix}`);
  const parse = PARSERS[word];

  describe(`parse ${word}-rollout, valid`, () => {
    const cases: [string, Record<string, string>, RolloutConfig | undefined, string[]][] = [
      ["no rollout annotation", { [annotationKey("rollout")]: "true" }, undefined, []],
      [
        "a rollout at index 4",
        {
          [key("")]: "true",
          [key("-current-revision")]: "rev-1",
          [key("-update-revision")]: "rev-2",
          [key("-index-id")]: "4",
        },
        { enabled: true, currentRevision: "rev-1", updateRevision: "rev-2", indexId: 4 },
        [],
      ],
      [
        "a finished rollout",
        { [key("")]: "true", [key("-index-id")]: "-1" },
        rollout(true, -1),
        [],
      ],
      [
        "the flag without an index",
        { [key("")]: "true" },
        rollout(true, 0),
        [`${key("")} is "true" without ${key("-index-id")}: no pod applies this update yet`],
      ],
      [
        "an index without the flag",
        { [key("-index-id")]: "3" },
        rollout(false, 3),
        [`${key("-index-id")} is ignored because ${key("")} is not "true"`],
      ],
    ];
    for (const [title, annotations, expected, warnings] of cases) {
      it(`given ${title}, returns ${JSON.stringify(expected)}`, () => {
        assert.deepEqual(parse(annotations), { ok: true, value: expected, warnings });
      });
    }
  });

  describe(`parse ${word}-rollout, malformed`, () => {
    const index = "expected -1 or an integer between 0 and 2147483647";
    const cases: [string, string, string][] = [
      ["", "on", `expected "true" or "false", got "on"`],
      ["-index-id", "-2", `${index}, got "-2"`],
      ["-index-id", "all", `${index}, got "all"`],
      ["-index-id", "", `${index}, got ""`],
      ["-current-revision", "", `expected a revision name, got "" (it is empty)`],
      [
        "-update-revision",
        " rev",
        `expected a revision name, got " rev" (it has leading or trailing spaces)`,
      ],
    ];
    for (const [suffix, raw, message] of cases) {
      it(`given ${word}-rollout${suffix}: ${quote(raw)}, returns an error naming ${key(suffix)}`, () => {
        assert.deepEqual(
          parse({ [key("")]: "true", [key("-index-id")]: "1", [key(suffix)]: raw }),
          {
            ok: false,
            errors: [{ field: annotationPath(key(suffix)), message }],
            warnings: [],
          },
        );
      });
    }
  });
}

function rollout(enabled: boolean, indexId: number): RolloutConfig {
  return { enabled, currentRevision: undefined, updateRevision: undefined, indexId };
}

describe("rolloutApplies", () => {
  const cases: [string, RolloutConfig | undefined, number, boolean][] = [
    ["no rollout", undefined, 3, true],
    ["the flag off", rollout(false, 0), 3, true],
    ["index -1 (done)", rollout(true, -1), 7, true],
    ["index -1 and an unknown ordinal", rollout(true, -1), -1, true],
    ["index 0 (the default)", rollout(true, 0), 0, false],
    ["index 4 and ordinal 0", rollout(true, 4), 0, true],
    ["index 4 and ordinal 3", rollout(true, 4), 3, true],
    ["index 4 and ordinal 4", rollout(true, 4), 4, false],
    ["index 4 and an unknown ordinal", rollout(true, 4), -1, false],
  ];
  for (const [title, config, ordinal, expected] of cases) {
    it(`given ${title}, returns ${expected}`, () => {
      assert.equal(rolloutApplies(config, ordinal), expected);
    });
  }
});

describe("podOrdinalFromName", () => {
  const cases: [string, number][] = [
    ["bulwark-gateway-0", 0],
    ["bulwark-gateway-12", 12],
    ["gateway", -1],
    ["gateway-", -1],
    ["gateway-1a", -1],
    ["", -1],
  ];
  for (const [name, expected] of cases) {
    it(`given ${quote(name)}, returns ${expected}`, () => {
      assert.equal(podOrdinalFromName(name), expected);
    });
  }
});
