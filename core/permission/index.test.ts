import { describe, it } from "node:test";
import assert from "node:assert/strict";
import * as permission from "./index";

describe("core/permission public surface", () => {
  it("given the module, returns the fixed names the init client and the server share", () => {
    assert.equal(permission.INIT_CONTAINER_NAME, "bulwark-init");
    assert.equal(permission.TOKEN_PATH, "/var/run/secrets/bulwark.dev/serviceaccount/token");
    assert.equal(permission.BREAKER_THRESHOLD, 3);
    assert.deepEqual([...permission.PROVIDER_TYPES], ["http", "mysql"]);
  });
});
