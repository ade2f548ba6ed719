import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import {
  integer,
  loadEnv,
  logLevel,
  optionalNumber,
  parseDurationMs,
  readFlags,
  seconds,
} from "./env-settings";

describe("readFlags", () => {
  const known = { port: "BULWARK_PORT", host: "BULWARK_HOST" };
  const cases: [string[], ReturnType<typeof readFlags>][] = [
    [[], { values: {} }],
    [["--port", "1", "--host=h"], { values: { port: "1", host: "h" } }],
    [["--port", "1", "--port", "2"], { values: { port: "2" } }],
    [["--nope", "1"], { message: "unknown flag --nope (see --help)" }],
    [["-p", "1"], { message: "unknown flag -p (see --help)" }],
    [["--port"], { message: "--port needs a value (BULWARK_PORT)" }],
    [["serve"], { message: 'unknown argument "serve" (see --help)' }],
    [["--toString", "x"], { message: "unknown flag --toString (see --help)" }],
  ];
  for (const [argv, expected] of cases) {
    it(`given ${JSON.stringify(argv)}, returns ${JSON.stringify(expected)}`, () =>
      assert.deepEqual(readFlags(argv, known), expected));
  }
});

describe("loadEnv", () => {
  const schema = z.object({
    PORT: integer("PORT", 80, 1, 65535),
    WAIT_SECONDS: seconds("WAIT_SECONDS", 2, 0),
    LOG_LEVEL: logLevel(),
    LIST: z.string().optional(),
  });
  it("given nothing, returns the defaults (seconds read as milliseconds)", () => {
    assert.deepEqual(loadEnv(schema, {}), {
      ok: true,
      settings: { PORT: 80, WAIT_SECONDS: 2000, LOG_LEVEL: "info" },
    });
  });
  it("treats an empty variable as unset, unless it is listed as one where empty means none", () => {
    assert.deepEqual(loadEnv(schema, { PORT: "", LIST: "" }), {
      ok: true,
      settings: { PORT: 80, WAIT_SECONDS: 2000, LOG_LEVEL: "info" },
    });
    const kept = loadEnv(schema, { LIST: "" }, ["LIST"]);
    assert.ok(kept.ok);
    assert.equal(kept.settings.LIST, "");
  });
  it("given bad values, returns one line naming the first", () => {
    assert.deepEqual(loadEnv(schema, { PORT: "80x", LOG_LEVEL: "loud" }), {
      ok: false,
      message: 'PORT must be an integer from 1 to 65535; got "80x"',
    });
    assert.deepEqual(loadEnv(schema, { LOG_LEVEL: "loud" }), {
      ok: false,
      message: 'LOG_LEVEL must be one of error, warn, info, debug; got "loud"',
    });
  });
});

describe("parseDurationMs", () => {
  const cases: [string, number | undefined][] = [
    ["500ms", 500],
    ["2m", 120_000],
    ["1h30m", 5_400_000],
    ["1.5s", 1500],
    ["30", 30_000],
    ["2 minutes", undefined],
    ["-1s", undefined],
    ["", undefined],
    ["1d", undefined],
  ];
  for (const [text, expected] of cases) {
    it(`given ${JSON.stringify(text)}, returns ${expected}`, () =>
      assert.equal(parseDurationMs(text), expected));
  }
});

describe("optionalNumber", () => {
  const schema = z.object({ PORT: optionalNumber("PORT", { min: 0, max: 65535 }) });
  it("is undefined when unset and the number when set, 0 included", () => {
    assert.deepEqual(loadEnv(schema, {}), { ok: true, settings: {} });
    assert.deepEqual(loadEnv(schema, { PORT: "0" }), { ok: true, settings: { PORT: 0 } });
    assert.deepEqual(loadEnv(schema, { PORT: "9465" }), { ok: true, settings: { PORT: 9465 } });
  });
  it("refuses what number refuses, naming the variable", () => {
    for (const bad of ["x", "-1", "65536", "1.5"]) {
      assert.deepEqual(loadEnv(schema, { PORT: bad }), {
        ok: false,
        message: `PORT must be an integer from 0 to 65535; got ${JSON.stringify(bad)}`,
      });
    }
  });
});
