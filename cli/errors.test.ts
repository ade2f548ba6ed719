import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseArgs } from "node:util";
import { CommandFailed, errorLine, exitCodeFor, UsageError } from "./errors";

class OwnInputError extends Error {}
const isInput = (error: unknown) => error instanceof OwnInputError;

describe("exitCodeFor", () => {
  it("given a wrong command line, returns 2: ours, the caller's input errors, parseArgs'", () => {
    assert.equal(exitCodeFor(new UsageError("-n is required"), isInput), 2);
    assert.equal(exitCodeFor(new OwnInputError("a.json: not YAML"), isInput), 2);
    let parseError: unknown;
    try {
      parseArgs({ args: ["--nope"], options: {}, strict: true });
    } catch (error) {
      parseError = error;
    }
    assert.equal(exitCodeFor(parseError, isInput), 2);
  });
  it("given a failure to do a right command (cluster unreachable, refused), returns 1", () => {
    assert.equal(exitCodeFor(new CommandFailed("reading pod a/b: connection refused"), isInput), 1);
    assert.equal(exitCodeFor({ status: 403, statusText: "Forbidden" }, isInput), 1);
    assert.equal(exitCodeFor(new TypeError("fetch failed"), isInput), 1);
  });
});

describe("errorLine", () => {
  it("prints one line, never [object Object]", () => {
    assert.equal(
      errorLine({ status: 404, statusText: "Not Found" }),
      "bulwark: HTTP 404 Not Found\n",
    );
  });
});
