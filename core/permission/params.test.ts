import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { z } from "zod";
import {
  HTTP_ACTIONS,
  httpParamsSchema,
  MYSQL_DATABASE_PRIVILEGES,
  MYSQL_TABLE_PRIVILEGES,
  mysqlIdentifierProblem,
  mysqlParamsSchema,
  paramsSchemas,
  PROVIDER_TYPES,
} from "./params";

/** "path: message" of every issue, or "ok". */
function outcome(schema: z.ZodType, value: unknown): string[] | "ok" {
  const parsed = schema.safeParse(value);
  if (parsed.success) return "ok";
  return parsed.error.issues.map(i => `${i.path.join(".")}: ${i.message}`);
}

describe("httpParamsSchema", () => {
  const cases: [string, unknown, RegExp | "ok"][] = [
    ["a resource and an action", { resource: "orders-db", action: "read" }, "ok"],
    [
      "a path-like resource and a port",
      { resource: "kafka:topic/payments", action: "write", port: 9092 },
      "ok",
    ],
    ["an admin action", { resource: "svc.billing_v2", action: "admin" }, "ok"],
    [
      "an unknown action",
      { resource: "a", action: "delete" },
      /^action: must be one of read, write, admin; got "delete"$/,
    ],
    ["no action", { resource: "a" }, /^action: /],
    ["a resource with a space", { resource: "a b", action: "read" }, /^resource: must be letters/],
    [
      "a resource with a parent segment",
      { resource: "a/../b", action: "read" },
      /^resource: must not contain/,
    ],
    ["a resource ending in '/'", { resource: "a/", action: "read" }, /^resource: must be letters/],
    ["a port of 0", { resource: "a", action: "read", port: 0 }, /^port: /],
    ["a port of 70000", { resource: "a", action: "read", port: 70000 }, /^port: /],
    [
      "an unknown key (a typo)",
      { resource: "a", action: "read", prot: 80 },
      /Unrecognized key: "prot"/,
    ],
    ["a 254-character resource", { resource: "a".repeat(254), action: "read" }, /at most 253/],
  ];
  for (const [title, value, expected] of cases) {
    it(`given ${title}, returns ${expected === "ok" ? "the params" : expected}`, () => {
      const result = outcome(httpParamsSchema, value);
      if (expected === "ok") assert.equal(result, "ok");
      else {
        assert.notEqual(result, "ok");
        assert.match(String(result), expected);
      }
    });
  }
});

describe("mysqlIdentifierProblem", () => {
  const cases: [string, RegExp | undefined][] = [
    ["orders", undefined],
    ["Orders_2024", undefined],
    ["_tmp", undefined],
    ["2024_sales", undefined],
    ["a".repeat(64), undefined],
    ["a".repeat(65), /1-64/],
    ["", /1-64/],
    ["123", /digits only/],
    ["orders`; DROP DATABASE x; --", /1-64/],
    ["a`b", /1-64/],
    ["a.b", /1-64/],
    ["a b", /1-64/],
    ["a-b", /1-64/],
    ["*", /1-64/],
    ["a'", /1-64/],
    ['a"', /1-64/],
    ["a/*", /1-64/],
    ["a\u0000", /1-64/],
    ["ä", /1-64/],
  ];
  for (const [value, expected] of cases) {
    it(`given ${JSON.stringify(value.length > 30 ? value.slice(0, 12) + "…" : value)}, returns ${expected ?? "no problem"}`, () => {
      const problem = mysqlIdentifierProblem(value);
      if (expected === undefined) assert.equal(problem, undefined);
      else assert.match(problem ?? "", expected);
    });
  }
});

describe("mysqlParamsSchema", () => {
  const cases: [string, unknown, RegExp | "ok"][] = [
    ["a database and SELECT", { database: "orders", privileges: ["SELECT"] }, "ok"],
    [
      "a table and table privileges",
      { database: "orders", table: "items", privileges: ["SELECT", "INSERT", "UPDATE", "DELETE"] },
      "ok",
    ],
    [
      "database-level privileges without a table",
      { database: "orders", privileges: ["EXECUTE", "LOCK TABLES"] },
      "ok",
    ],
    [
      "no privileges",
      { database: "orders", privileges: [] },
      /^privileges: must name at least one privilege$/,
    ],
    [
      "an injected database name",
      { database: "x`; DROP TABLE y; --", privileges: ["SELECT"] },
      /^database: must be 1-64/,
    ],
    [
      "an injected table name",
      { database: "x", table: "t` TO 'evil'@'%'; --", privileges: ["SELECT"] },
      /^table: must be 1-64/,
    ],
    [
      "a privilege with SQL in it",
      { database: "x", privileges: ["SELECT", "INSERT", "SELECT ON *.* TO x"] },
      /^privileges\.2: must be one of SELECT, /,
    ],
    [
      "ALL PRIVILEGES",
      { database: "x", privileges: ["ALL PRIVILEGES"] },
      /^privileges\.0: must be one of/,
    ],
    [
      "GRANT OPTION",
      { database: "x", privileges: ["GRANT OPTION"] },
      /^privileges\.0: must be one of/,
    ],
    [
      "a lowercase privilege",
      { database: "x", privileges: ["select"] },
      /^privileges\.0: must be one of .*got "select"/,
    ],
    [
      "a repeated privilege",
      { database: "x", privileges: ["SELECT", "INSERT", "SELECT"] },
      /^privileges\.2: repeats privileges\[0\] \(SELECT\)$/,
    ],
    [
      "a database-level privilege on a table",
      { database: "x", table: "t", privileges: ["SELECT", "EXECUTE"] },
      /^privileges\.1: EXECUTE applies to a whole database, not to table t$/,
    ],
    ["no database", { privileges: ["SELECT"] }, /^database: /],
    ...["mysql", "information_schema", "performance_schema", "sys", "MySQL", "SYS"].map(
      database =>
        [
          `the system schema ${database}`,
          { database, privileges: ["SELECT"] },
          /^database: ".*" is a system schema \(mysql, information_schema, performance_schema, sys\): never granted$/,
        ] as [string, unknown, RegExp],
    ),
    [
      "a table of the mysql schema",
      { database: "mysql", table: "user", privileges: ["SELECT"] },
      /^database: "mysql" is a system schema/,
    ],
    ["a database named like one", { database: "mysql_orders", privileges: ["SELECT"] }, "ok"],
    [
      "an unknown key",
      { database: "x", privileges: ["SELECT"], host: "%" },
      /Unrecognized key: "host"/,
    ],
  ];
  for (const [title, value, expected] of cases) {
    it(`given ${title}, returns ${expected === "ok" ? "the params" : expected}`, () => {
      const result = outcome(mysqlParamsSchema, value);
      if (expected === "ok") assert.equal(result, "ok");
      else {
        assert.notEqual(result, "ok");
        assert.match(String(result), expected);
      }
    });
  }

  it("given the privilege lists, returns table privileges inside database privileges and no administrative one", () => {
    const database = new Set<string>(MYSQL_DATABASE_PRIVILEGES);
    assert.ok(MYSQL_TABLE_PRIVILEGES.every(p => database.has(p)));
    for (const forbidden of ["ALL", "ALL PRIVILEGES", "GRANT OPTION", "SUPER", "FILE", "PROCESS"]) {
      assert.equal(database.has(forbidden), false, forbidden);
    }
  });
});

describe("paramsSchemas", () => {
  it("given every provider type, returns a params schema for it", () => {
    assert.deepEqual(Object.keys(paramsSchemas).sort(), [...PROVIDER_TYPES].sort());
    assert.deepEqual([...HTTP_ACTIONS], ["read", "write", "admin"]);
  });
});
