import assert from "node:assert/strict";
import { createServer, type Server, type Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import { createConnection } from "mysql2/promise";
import { startMariaDb, type MariaDb } from "../../test/harness/mariadb";
import { waitUntil } from "../../test/harness/wait";
import {
  accountLockName,
  grantStatements,
  grantTarget,
  mysqlEndpoint,
  MysqlProvider,
  parseMysqlCredentials,
  revokeStatements,
  type MysqlCredentials,
} from "./mysql";
import { TransientProviderError, type GrantRequest, type RevokeRequest } from "./types";

const POD_PASSWORD = `app-'pa"ss\\word`;
const never = new AbortController().signal;

function request(ip: string, params: Record<string, unknown>): GrantRequest {
  return {
    podUid: `uid-${ip}`,
    namespace: "shop",
    pod: `web-${ip}`,
    ip,
    group: "orders",
    params,
  };
}

/** The revoke of `grant` when no other pod holds anything at its IP (or holds `others`). */
function revokeOf(
  grant: GrantRequest,
  others: readonly Record<string, unknown>[] = [],
): RevokeRequest {
  return { ...grant, stillHeld: async () => others };
}

async function transient(promise: Promise<unknown>): Promise<TransientProviderError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof TransientProviderError, `expected transient, got ${String(error)}`);
    return error;
  }
  assert.fail("expected a TransientProviderError");
}

/** Rows of `sql` as the pod at `ip` (user `app`), or the error code. */
async function selectAs(db: MariaDb, ip: string, sql: string): Promise<unknown[] | string> {
  try {
    const connection = await db.connectFrom(ip, "app", POD_PASSWORD);
    try {
      const [rows] = await connection.query(sql);
      return rows as unknown[];
    } finally {
      await connection.end();
    }
  } catch (error) {
    return String((error as { code?: unknown }).code ?? error);
  }
}

describe("mysql provider against a real MariaDB", () => {
  let db: MariaDb;
  let credentials: MysqlCredentials;
  let provider: MysqlProvider;

  before(async () => {
    db = await startMariaDb();
    await db.query("CREATE DATABASE shop");
    await db.query("CREATE TABLE shop.orders (id INT PRIMARY KEY)");
    await db.query("INSERT INTO shop.orders VALUES (1), (2)");
    await db.query("CREATE TABLE shop.secrets (id INT)");
    await db.query("CREATE DATABASE a_b");
    await db.query("CREATE DATABASE aXb");
    await db.query("CREATE TABLE aXb.t (id INT)");
    credentials = {
      username: db.admin.user,
      password: db.admin.password,
      podUser: "app",
      podPassword: POD_PASSWORD,
    };
    provider = new MysqlProvider({
      name: "shop-db",
      address: db.address,
      timeoutMs: 5000,
      credentials,
    });
  });
  after(() => db?.stop());

  it("the harness: a user created @'127.0.0.7' logs in from 127.0.0.7 and not from 127.0.0.8", async () => {
    await db.query("CREATE USER 'probe'@'127.0.0.7' IDENTIFIED BY 'pw'");
    assert.equal(await db.canLogIn("127.0.0.7", "probe", "pw"), true);
    assert.equal(await db.canLogIn("127.0.0.8", "probe", "pw"), "ER_HOST_NOT_PRIVILEGED");
    assert.equal(await db.canLogIn("127.0.0.7", "probe", "wrong"), "ER_ACCESS_DENIED_ERROR");
  });

  it("grants the pod IP the table privileges, and only that IP and that table", async () => {
    const req = request("127.0.0.10", {
      database: "shop",
      table: "orders",
      privileges: ["SELECT"],
    });
    const state = await provider.grant(req, never);
    assert.deepEqual(state, { state: "granted", jobId: "app@127.0.0.10" });
    assert.deepEqual(await selectAs(db, "127.0.0.10", "SELECT id FROM shop.orders ORDER BY id"), [
      { id: 1 },
      { id: 2 },
    ]);
    assert.equal(
      await selectAs(db, "127.0.0.10", "SELECT * FROM shop.secrets"),
      "ER_TABLEACCESS_DENIED_ERROR",
    );
    assert.equal(await selectAs(db, "127.0.0.11", "SELECT 1"), "ER_HOST_NOT_PRIVILEGED");
  });

  it("is idempotent: granting twice works and revoking twice works; after revoke the IP cannot log in", async () => {
    const req = request("127.0.0.12", { database: "shop", privileges: ["SELECT", "INSERT"] });
    assert.equal((await provider.grant(req, never)).state, "granted");
    assert.equal((await provider.grant(req, never)).state, "granted");
    assert.equal((await provider.poll(req, "app@127.0.0.12", never)).state, "granted");
    assert.deepEqual(await selectAs(db, "127.0.0.12", "SELECT COUNT(*) AS n FROM shop.orders"), [
      { n: 2 },
    ]);
    const accounts = await db.query<{ n: number }[]>(
      "SELECT COUNT(*) AS n FROM mysql.user WHERE User = 'app' AND Host = '127.0.0.12'",
    );
    assert.equal(accounts[0]?.n, 1);
    await provider.revoke(revokeOf(req), never);
    await provider.revoke(revokeOf(req), never);
    assert.equal(await db.canLogIn("127.0.0.12", "app", POD_PASSWORD), "ER_HOST_NOT_PRIVILEGED");
  });

  it("treats '_' in a database name literally (not as a wildcard matching aXb)", async () => {
    const req = request("127.0.0.13", { database: "a_b", privileges: ["SELECT"] });
    assert.equal((await provider.grant(req, never)).state, "granted");
    assert.equal(
      await selectAs(db, "127.0.0.13", "SELECT * FROM aXb.t"),
      "ER_TABLEACCESS_DENIED_ERROR",
    );
    const grants = await db.query<Record<string, string>[]>("SHOW GRANTS FOR 'app'@'127.0.0.13'");
    assert.ok(grants.some(row => Object.values(row)[0]?.includes("`a\\_b`.*")));
  });

  it("given malformed params, answers denied naming the field, before touching the server", async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [
        { database: "shop`; DROP DATABASE shop; --", privileges: ["SELECT"] },
        /^params\.database: must be 1-64 ASCII/,
      ],
      [{ database: "shop", privileges: ["ALL"] }, /^params\.privileges\[0\]: must be one of/],
      [
        { database: "shop", table: "orders", privileges: ["EXECUTE"] },
        /^params\.privileges\[0\]: EXECUTE applies to a whole database/,
      ],
      [{ privileges: ["SELECT"] }, /^params\.database: is required/],
      [
        { database: "shop", privileges: [] },
        /^params\.privileges: must name at least one privilege/,
      ],
    ];
    for (const [params, reason] of cases) {
      const state = await provider.grant(request("127.0.0.14", params), never);
      assert.equal(state.state, "denied");
      assert.match((state as { reason: string }).reason, reason);
    }
    const badIp = await provider.grant(
      request("127.0.0.1' OR '1", { database: "shop", privileges: ["SELECT"] }),
      never,
    );
    assert.match((badIp as { reason: string }).reason, /^ip: must be an IPv4 or IPv6 address/);
    const users = await db.query<unknown[]>("SELECT 1 FROM mysql.user WHERE Host = '127.0.0.14'");
    assert.equal(users.length, 0);
    assert.deepEqual(await db.query("SHOW DATABASES LIKE 'shop'"), [{ "Database (shop)": "shop" }]);
  });

  it("given a table that does not exist, answers denied with the server's reason", async () => {
    const req = request("127.0.0.15", { database: "shop", table: "nope", privileges: ["SELECT"] });
    const state = await provider.grant(req, never);
    assert.equal(state.state, "denied");
    assert.match(
      (state as { reason: string }).reason,
      /^grant: Table 'shop\.nope' doesn't exist \(ER_NO_SUCH_TABLE\)/,
    );
  });

  it("given an admin without rights on the database, answers denied (a permission error)", async () => {
    await db.query("CREATE USER 'limited'@'127.0.0.1' IDENTIFIED BY 'pw'");
    await db.query("GRANT CREATE USER ON *.* TO 'limited'@'127.0.0.1'");
    await db.query("GRANT SELECT ON a_b.* TO 'limited'@'127.0.0.1' WITH GRANT OPTION");
    const limited = new MysqlProvider({
      name: "limited",
      address: db.address,
      timeoutMs: 5000,
      credentials: { ...credentials, username: "limited", password: "pw" },
    });
    const state = await limited.grant(
      request("127.0.0.16", { database: "shop", privileges: ["SELECT"] }),
      never,
    );
    assert.equal(state.state, "denied");
    assert.match((state as { reason: string }).reason, /ER_DBACCESS_DENIED_ERROR|ER_ACCESS_DENIED/);
  });

  it("given an admin that may not create users, throws transient (a setup fault, the same for every pod)", async () => {
    await db.query("CREATE USER 'nocreate'@'127.0.0.1' IDENTIFIED BY 'pw'");
    await db.query("GRANT SELECT ON shop.* TO 'nocreate'@'127.0.0.1' WITH GRANT OPTION");
    const nocreate = new MysqlProvider({
      name: "nocreate",
      address: db.address,
      timeoutMs: 5000,
      credentials: { ...credentials, username: "nocreate", password: "pw" },
    });
    const req = request("127.0.0.26", { database: "shop", privileges: ["SELECT"] });
    const error = await transient(nocreate.grant(req, never));
    assert.match(error.message, /ER_SPECIFIC_ACCESS_DENIED_ERROR/);
    await transient(nocreate.revoke(revokeOf(req), never));
  });

  it("given wrong admin credentials, throws transient (the setup's fault, not the pod's)", async () => {
    const wrong = new MysqlProvider({
      name: "wrong",
      address: db.address,
      timeoutMs: 5000,
      credentials: { ...credentials, password: "nope" },
    });
    const error = await transient(
      wrong.grant(request("127.0.0.17", { database: "shop", privileges: ["SELECT"] }), never),
    );
    assert.match(error.message, /connecting: .*ER_ACCESS_DENIED_ERROR/);
  });

  it("given no server at the address, throws transient", async () => {
    const down = new MysqlProvider({
      name: "down",
      address: "127.0.0.1:1",
      timeoutMs: 2000,
      credentials,
    });
    const error = await transient(
      down.grant(request("127.0.0.18", { database: "shop", privileges: ["SELECT"] }), never),
    );
    assert.match(error.message, /ECONNREFUSED/);
    await transient(down.revoke(revokeOf(request("127.0.0.18", {})), never));
  });

  it("given a server that never answers the handshake, times out as transient", async () => {
    const held: Socket[] = [];
    const silent: Server = createServer(socket => held.push(socket));
    await new Promise<void>(resolve => silent.listen(0, "127.0.0.1", resolve));
    const { port } = silent.address() as { port: number };
    try {
      const hung = new MysqlProvider({
        name: "hung",
        address: `127.0.0.1:${port}`,
        timeoutMs: 300,
        credentials,
      });
      const error = await transient(
        hung.grant(request("127.0.0.19", { database: "shop", privileges: ["SELECT"] }), never),
      );
      assert.match(error.message, /no answer within 300 ms|ETIMEDOUT/);
    } finally {
      for (const socket of held) socket.destroy();
      await new Promise(resolve => silent.close(resolve));
    }
  });

  it("given a statement blocked by a global read lock, times out as transient", async () => {
    const locker = await createConnection({ socketPath: db.socketPath, user: "root" });
    try {
      await locker.query("FLUSH TABLES WITH READ LOCK");
      const slow = new MysqlProvider({
        name: "slow",
        address: db.address,
        timeoutMs: 1000,
        credentials,
      });
      await transient(
        slow.grant(request("127.0.0.20", { database: "shop", privileges: ["SELECT"] }), never),
      );
    } finally {
      await locker.query("UNLOCK TABLES");
      await locker.end();
    }
    // Nothing half-done blocks the next attempt.
    const req = request("127.0.0.20", { database: "shop", privileges: ["SELECT"] });
    assert.equal((await provider.grant(req, never)).state, "granted");
  });

  it("given the caller aborting, rejects with the caller's reason, not transient", async () => {
    const locker = await createConnection({ socketPath: db.socketPath, user: "root" });
    try {
      await locker.query("FLUSH TABLES WITH READ LOCK");
      const controller = new AbortController();
      const pending = provider.grant(
        request("127.0.0.21", { database: "shop", privileges: ["SELECT"] }),
        controller.signal,
      );
      void pending.catch(() => undefined); // asserted below; not unhandled while it waits
      // Aborted while the grant is held by the lock, not before it started or after it ended.
      await waitUntil("the grant to wait on the read lock", async () => {
        const [rows] = await locker.query(
          "SELECT COUNT(*) AS waiting FROM information_schema.PROCESSLIST WHERE STATE LIKE 'Waiting for % lock'",
        );
        return Number((rows as { waiting: unknown }[])[0]?.waiting) > 0;
      });
      controller.abort(new Error("server shutting down"));
      await assert.rejects(pending, (error: unknown) => {
        assert.ok(!(error instanceof TransientProviderError));
        assert.match(String(error), /server shutting down/);
        return true;
      });
    } finally {
      await locker.query("UNLOCK TABLES");
      await locker.end();
    }
  });

  it("escapes the password correctly even on a NO_BACKSLASH_ESCAPES server", async () => {
    await db.query(
      "SET GLOBAL sql_mode = 'STRICT_TRANS_TABLES,NO_BACKSLASH_ESCAPES,NO_AUTO_CREATE_USER'",
    );
    try {
      const req = request("127.0.0.23", { database: "shop", privileges: ["SELECT"] });
      assert.equal((await provider.grant(req, never)).state, "granted");
      assert.equal(await db.canLogIn("127.0.0.23", "app", POD_PASSWORD), true);
    } finally {
      await db.query("SET GLOBAL sql_mode = DEFAULT");
    }
  });

  it("serializes grant and revoke of one account: a revoke waits for the account's lock", async () => {
    const holder = await createConnection({ socketPath: db.socketPath, user: "root" });
    try {
      await holder.query("SELECT GET_LOCK(?, 1)", [accountLockName("app@127.0.0.24")]);
      const blocked = new MysqlProvider({
        name: "b",
        address: db.address,
        timeoutMs: 1000,
        credentials,
      });
      const error = await transient(blocked.revoke(revokeOf(request("127.0.0.24", {})), never));
      assert.match(error.message, /holds its lock|no answer within/);
      // Another account is not blocked.
      const req = request("127.0.0.25", { database: "shop", privileges: ["SELECT"] });
      assert.equal((await blocked.grant(req, never)).state, "granted");
    } finally {
      await holder.end();
    }
  });

  it("revokes one pod's grant at a reused IP and leaves what another pod holds there", async () => {
    const ip = "127.0.0.30";
    const old = request(ip, {
      database: "shop",
      table: "orders",
      privileges: ["SELECT", "INSERT"],
    });
    const fresh = request(ip, { database: "shop", table: "orders", privileges: ["SELECT"] });
    const other = request(ip, { database: "a_b", privileges: ["SELECT"] });
    for (const req of [old, fresh, other]) {
      assert.equal((await provider.grant(req, never)).state, "granted");
    }
    // The old pod goes; the new pod holds SELECT on the same table and a grant on a_b.
    await provider.revoke(revokeOf(old, [fresh.params, other.params]), never);
    const grants = async () =>
      (await db.query<Record<string, string>[]>(`SHOW GRANTS FOR 'app'@'${ip}'`))
        .map(row => Object.values(row)[0] ?? "")
        .filter(g => !g.startsWith("GRANT USAGE"))
        .sort();
    assert.deepEqual(await grants(), [
      "GRANT SELECT ON `a\\_b`.* TO `app`@`127.0.0.30`",
      "GRANT SELECT ON `shop`.`orders` TO `app`@`127.0.0.30`",
    ]);
    assert.deepEqual(await selectAs(db, ip, "SELECT COUNT(*) AS n FROM shop.orders"), [{ n: 2 }]);
    assert.equal(
      await selectAs(db, ip, "INSERT INTO shop.orders VALUES (9)"),
      "ER_TABLEACCESS_DENIED_ERROR",
    );
    // Revoking again is a no-op; a grant already gone is success.
    await provider.revoke(revokeOf(old, [fresh.params, other.params]), never);
    await provider.revoke(revokeOf(other, [fresh.params]), never);
    await provider.revoke(revokeOf(other, [fresh.params]), never);
    assert.deepEqual(await grants(), ["GRANT SELECT ON `shop`.`orders` TO `app`@`127.0.0.30`"]);
    // The last holder goes: the account with it.
    await provider.revoke(revokeOf(fresh), never);
    assert.equal(await db.canLogIn(ip, "app", POD_PASSWORD), "ER_HOST_NOT_PRIVILEGED");
  });

  it("decides a revoke under the account's lock: a grant recorded meanwhile is seen", async () => {
    const ip = "127.0.0.31";
    const old = request(ip, { database: "shop", privileges: ["SELECT"] });
    const fresh = request(ip, { database: "shop", table: "orders", privileges: ["SELECT"] });
    await provider.grant(old, never);
    const holder = await createConnection({ socketPath: db.socketPath, user: "root" });
    let asked = 0;
    try {
      await holder.query("SELECT GET_LOCK(?, 1)", [accountLockName(`app@${ip}`)]);
      const revoke = provider.revoke(
        {
          ...old,
          stillHeld: async () => {
            asked++;
            return [fresh.params];
          },
        },
        never,
      );
      // That the revoke does NOT go on while the lock is held can only be seen over a while: kept short.
      await new Promise(resolve => setTimeout(resolve, 300));
      assert.equal(asked, 0, "not asked while another grant or revoke holds the account");
      await holder.query("SELECT RELEASE_LOCK(?)", [accountLockName(`app@${ip}`)]);
      await revoke;
    } finally {
      await holder.end();
    }
    assert.equal(asked, 1, "asked once, after the lock");
    assert.equal(await db.canLogIn(ip, "app", POD_PASSWORD), true, "the account stays");
  });

  it("keeps the pod account's password in step with the Secret", async () => {
    const req = request("127.0.0.22", { database: "shop", privileges: ["SELECT"] });
    const old = new MysqlProvider({
      name: "shop-db",
      address: db.address,
      timeoutMs: 5000,
      credentials: { ...credentials, podPassword: "old" },
    });
    await old.grant(req, never);
    assert.equal(await db.canLogIn("127.0.0.22", "app", "old"), true);
    await provider.grant(req, never);
    assert.equal(await db.canLogIn("127.0.0.22", "app", "old"), "ER_ACCESS_DENIED_ERROR");
    assert.equal(await db.canLogIn("127.0.0.22", "app", POD_PASSWORD), true);
  });
});

describe("mysql provider helpers", () => {
  it("builds statements with placeholders for values and quoted identifiers", () => {
    const statements = grantStatements({ podUser: "app", podPassword: "p'w" }, "10.0.0.1", {
      database: "shop",
      table: "orders",
      privileges: ["SELECT", "SHOW VIEW"],
    });
    assert.deepEqual(statements, [
      { sql: "CREATE USER IF NOT EXISTS ?@? IDENTIFIED BY ?", values: ["app", "10.0.0.1", "p'w"] },
      { sql: "ALTER USER ?@? IDENTIFIED BY ?", values: ["app", "10.0.0.1", "p'w"] },
      {
        sql: "GRANT SELECT, SHOW VIEW ON `shop`.`orders` TO ?@?",
        values: ["app", "10.0.0.1"],
        fromParams: true,
      },
    ]);
    assert.equal(grantTarget({ database: "a_b%", privileges: ["SELECT"] }), "`a\\_b\\%`.*");
  });

  it("revokes: drops the account when nothing else is held, else only the privileges no one else holds on the same target", () => {
    const shop = { database: "shop", privileges: ["SELECT", "INSERT", "DELETE"] } as const;
    const drop = { sql: "DROP USER IF EXISTS ?@?", values: ["app", "10.0.0.1"] };
    const revoke = (privileges: string, target: string) => ({
      sql: `REVOKE ${privileges} ON ${target} FROM ?@?`,
      values: ["app", "10.0.0.1"],
      absentIsDone: true,
    });
    const cases: [
      string,
      Parameters<typeof revokeStatements>[2],
      Record<string, unknown>[],
      object[],
    ][] = [
      ["nothing else held", { ...shop, privileges: [...shop.privileges] }, [], [drop]],
      ["invalid params, nothing else held", undefined, [], [drop]],
      [
        "invalid params, something else held",
        undefined,
        [{ database: "x", privileges: ["SELECT"] }],
        [],
      ],
      [
        "another pod holds SELECT on the same target",
        { ...shop, privileges: [...shop.privileges] },
        [{ database: "shop", privileges: ["SELECT"] }],
        [revoke("INSERT, DELETE", "`shop`.*")],
      ],
      [
        "another pod holds a table of the database: a separate grant",
        { ...shop, privileges: [...shop.privileges] },
        [{ database: "shop", table: "orders", privileges: ["SELECT"] }],
        [revoke("SELECT, INSERT, DELETE", "`shop`.*")],
      ],
      [
        "another pod holds all of it",
        { database: "shop", table: "orders", privileges: ["SELECT"] },
        [{ database: "shop", table: "orders", privileges: ["SELECT", "UPDATE"] }],
        [],
      ],
      [
        "a held entry that does not parse keeps the account",
        { database: "a_b", privileges: ["SELECT"] },
        [{ database: "a_b", privileges: "SELECT" }],
        [revoke("SELECT", "`a\\_b`.*")],
      ],
    ];
    for (const [what, params, held, expected] of cases) {
      assert.deepEqual(revokeStatements("app", "10.0.0.1", params, held), expected, what);
    }
  });

  it("reads host and port from an address", () => {
    assert.deepEqual(mysqlEndpoint("db.example"), { host: "db.example", port: 3306 });
    assert.deepEqual(mysqlEndpoint("10.0.0.5:3307"), { host: "10.0.0.5", port: 3307 });
    assert.deepEqual(mysqlEndpoint("[fd00::1]:3306"), { host: "fd00::1", port: 3306 });
  });

  it("parses credentials and names each missing or bad key", () => {
    const parsed = parseMysqlCredentials({ username: "admin", podUser: "app pod" });
    assert.equal(parsed.ok, false);
    assert.deepEqual(!parsed.ok && parsed.errors.map(e => e.field), [
      "password",
      "podPassword",
      "podUser",
    ]);
    const good = parseMysqlCredentials({
      username: "a",
      password: "b",
      podUser: "app",
      podPassword: "c",
    });
    assert.ok(good.ok);
  });
});
