import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import * as permission from "./index";

describe("core/permission public surface", () => {
  const functions = [
    "mysqlIdentifierProblem",
    "httpAddressProblem",
    "mysqlAddressProblem",
    "parsePermissionProviderSpec",
    "validatePermissionProvider",
    "parsePermissionGroupSpec",
    "validatePermissionGroup",
    "podDisplayName",
    "parseInjectConfig",
    "planInjection",
    "bulwarkInitContainer",
    "tokenVolume",
    "freeVolumeName",
    "parseGrantRecord",
    "serializeGrantRecord",
    "finalizerRemovalPatch",
    "revocationPlan",
    "jitter",
    "stepBackoff",
    "exponentialBackoff",
    "isBreakerOpen",
    "breakerGate",
    "recordFailure",
    "recordSuccess",
    "resetBreaker",
    "serializeBreaker",
    "parseBreaker",
    "readBreaker",
    "writeBreaker",
    "staleBreakerKeys",
    "configMapKeyProblems",
    "configMapDataBytes",
    "fieldPath",
    "issueErrors",
    "parseFields",
    "requiredFieldMessages",
    "parseCaBundle",
  ];
  for (const name of functions) {
    it(`given the module, returns a function ${name}`, () => {
      assert.equal(typeof (permission as Record<string, unknown>)[name], "function");
    });
  }

  const schemas = [
    "httpParamsSchema",
    "mysqlParamsSchema",
    "secretRefSchema",
    "permissionProviderSpecSchema",
    "permissionSchema",
    "permissionGroupSpecSchema",
    "injectConfigSchema",
    "grantRecordSchema",
    "breakerRecordSchema",
  ];
  for (const name of schemas) {
    it(`given the module, returns a zod schema ${name}`, () => {
      assert.ok((permission as Record<string, unknown>)[name] instanceof z.ZodType);
    });
  }

  it("given the module, returns the fixed names the init client and the server share", () => {
    assert.equal(permission.INIT_CONTAINER_NAME, "bulwark-init");
    assert.equal(permission.TOKEN_PATH, "/var/run/secrets/bulwark.dev/serviceaccount/token");
    assert.equal(permission.BREAKER_THRESHOLD, 3);
    assert.deepEqual([...permission.PROVIDER_TYPES], ["http", "mysql"]);
  });
});
