// A Deployment of annotated pods against a real MariaDB, with two permission-server replicas:
// every pod's init client ends granted and the pod's IP can log in; after a scale-down the
// removed pods' finalizer path revokes, and their IPs can no longer log in. An IP reused by a new
// pod (another database, fewer privileges) keeps everything the new pod was granted when the old
// pod's deletion revokes.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { AppsV1Api, type V1Pod } from "@kubernetes/client-node";
import { waitUntil } from "../../harness/wait";
import { startMariaDb, type MariaDb } from "../../harness/mariadb";
import { testCluster, testNamespace } from "../../harness/cluster";
import { forwardRevokes } from "../../harness/permission-endpoint";
import type { RunningServer } from "../../../permission-server/server";
import {
  createGroup,
  createPod,
  createProvider,
  deleteProvider,
  GROUP_ANNOTATION,
  podsOf,
  podToken,
  runInitFor,
  setPodIp,
  startReplicas,
  waitGone,
} from "./helpers";

const cluster = testCluster();
const apps = cluster.kc.makeApiClient(AppsV1Api);
const POD_USER = "shop_app";
const POD_PASSWORD = "app-pa55";
const REPLICAS = 4;

describe("permission server with MariaDB: a Deployment scales up and down", () => {
  let ns: string;
  let drop: () => Promise<void>;
  let db: MariaDb;
  let servers: RunningServer[];
  let provider: string;
  const ipOf = new Map<string, string>();

  before(async () => {
    [ns, drop] = await testNamespace(cluster, "perm-db");
    db = await startMariaDb();
    await db.query("CREATE DATABASE shop");
    await db.query("CREATE TABLE shop.orders (id INT PRIMARY KEY)");
    await db.query("INSERT INTO shop.orders VALUES (1), (2)");
    await db.query("CREATE DATABASE audit");
    await db.query("CREATE TABLE audit.log (id INT)");
    await cluster.core.createNamespacedSecret({
      namespace: ns,
      body: {
        metadata: { name: "db-admin" },
        stringData: {
          username: db.admin.user,
          password: db.admin.password,
          podUser: POD_USER,
          podPassword: POD_PASSWORD,
        },
      },
    });
    provider = `mariadb-${ns}`;
    await createProvider(cluster, provider, {
      type: "mysql",
      address: db.address,
      credentialsSecretRef: { namespace: ns, name: "db-admin" },
      timeoutSeconds: 5,
      rateLimit: { qps: 20, burst: 20 },
      concurrency: 4,
    });
    await createGroup(cluster, ns, "shop-db", {
      permissions: [
        {
          name: "orders",
          provider,
          params: { database: "shop", table: "orders", privileges: ["SELECT", "INSERT"] },
        },
      ],
    });
    // What a new pod at a reused IP holds: less of shop.orders, and another database.
    await createGroup(cluster, ns, "shop-reader", {
      permissions: [
        {
          name: "orders",
          provider,
          params: { database: "shop", table: "orders", privileges: ["SELECT"] },
        },
        { name: "audit", provider, params: { database: "audit", privileges: ["SELECT"] } },
      ],
    });
    servers = await startReplicas(cluster, ns, 2);
    await forwardRevokes(cluster.permissionEndpointUrl, ns, (servers[1] as RunningServer).url);
  });

  after(async () => {
    await forwardRevokes(cluster.permissionEndpointUrl, ns, null);
    for (const server of servers) await server.stop();
    await deleteProvider(cluster, provider);
    await drop();
    await db.stop();
  });

  it("grants every pod of the Deployment: each pod's IP logs in and reads the table", async () => {
    await apps.createNamespacedDeployment({
      namespace: ns,
      body: {
        metadata: { name: "shop" },
        spec: {
          replicas: REPLICAS,
          selector: { matchLabels: { app: "shop" } },
          template: {
            metadata: { labels: { app: "shop" }, annotations: { [GROUP_ANNOTATION]: "shop-db" } },
            spec: { containers: [{ name: "app", image: "registry.example/shop:1" }] },
          },
        },
      },
    });
    const pods = await waitUntil(
      `the Deployment's ${REPLICAS} pods`,
      async () => {
        const list = await podsOf(cluster, ns, "app=shop");
        return list.length === REPLICAS ? list : undefined;
      },
      60_000,
    );
    const started: V1Pod[] = [];
    for (const [i, pod] of pods.entries()) {
      assert.equal(pod.spec?.initContainers?.[0]?.name, "bulwark-init");
      const ip = `127.0.2.${i + 1}`;
      ipOf.set(pod.metadata?.name ?? "", ip);
      started.push(await setPodIp(cluster, ns, pod.metadata?.name ?? "", ip));
    }
    // Each pod's init client talks to one of the two replicas, as behind a Service.
    const results = await Promise.all(
      started.map(async (pod, i) =>
        runInitFor((servers[i % 2] as RunningServer).url, pod, await podToken(cluster, pod)),
      ),
    );
    assert.deepEqual(
      results,
      started.map(() => ({ granted: true })),
    );
    for (const ip of ipOf.values()) {
      const connection = await db.connectFrom(ip, POD_USER, POD_PASSWORD, "shop");
      const [rows] = await connection.query("SELECT COUNT(*) AS n FROM orders");
      await connection.end();
      assert.deepEqual(rows, [{ n: 2 }], `${ip} reads shop.orders`);
    }
    assert.notEqual(
      await db.canLogIn("127.0.2.99", POD_USER, POD_PASSWORD),
      true,
      "an IP never granted cannot log in",
    );
    const users = await db.query<{ host: string }[]>(
      "SELECT Host AS host FROM mysql.user WHERE User = ?",
      [POD_USER],
    );
    assert.deepEqual(
      users.map(u => u.host).sort(),
      [...ipOf.values()].sort(),
      "one account per pod IP, no duplicates",
    );
  });

  it("after a scale-down, the removed pods' IPs can no longer log in; the kept pod's still can", async () => {
    await apps.patchNamespacedDeploymentScale({
      name: "shop",
      namespace: ns,
      body: [{ op: "replace", path: "/spec/replicas", value: 1 }],
    });
    const [kept] = await waitUntil(
      "the removed pods to be revoked and gone",
      async () => {
        const list = await podsOf(cluster, ns, "app=shop");
        return list.length === 1 ? list : undefined;
      },
      90_000,
      250,
    );
    const keptIp = ipOf.get(kept?.metadata?.name ?? "");
    assert.ok(keptIp);
    assert.equal(await db.canLogIn(keptIp, POD_USER, POD_PASSWORD), true);
    for (const [name, ip] of ipOf) {
      if (name === kept?.metadata?.name) continue;
      assert.notEqual(
        await db.canLogIn(ip, POD_USER, POD_PASSWORD),
        true,
        `${ip} (${name}) can no longer log in`,
      );
    }
  });

  it("an IP reused by a new pod: deleting the old pod revokes only what the new one does not hold", async () => {
    const ip = "127.0.2.50";
    const granted = async (name: string, group: string, server: RunningServer) => {
      await createPod(cluster, ns, name, group);
      const pod = await setPodIp(cluster, ns, name, ip);
      assert.deepEqual(await runInitFor(server.url, pod, await podToken(cluster, pod)), {
        granted: true,
      });
    };
    await granted("reuse-old", "shop-db", servers[0] as RunningServer);
    await granted("reuse-new", "shop-reader", servers[1] as RunningServer);
    await cluster.core.deleteNamespacedPod({ name: "reuse-old", namespace: ns });
    await waitGone(cluster, ns, "reuse-old");
    const asNew = async (sql: string): Promise<unknown> => {
      const connection = await db.connectFrom(ip, POD_USER, POD_PASSWORD);
      try {
        return (await connection.query(sql))[0];
      } catch (error) {
        return (error as { code?: string }).code;
      } finally {
        await connection.end();
      }
    };
    assert.deepEqual(await asNew("SELECT COUNT(*) AS n FROM shop.orders"), [{ n: 2 }]);
    assert.deepEqual(await asNew("SELECT COUNT(*) AS n FROM audit.log"), [{ n: 0 }]);
    assert.equal(
      await asNew("INSERT INTO shop.orders VALUES (7)"),
      "ER_TABLEACCESS_DENIED_ERROR",
      "the old pod's INSERT went with it",
    );
    await cluster.core.deleteNamespacedPod({ name: "reuse-new", namespace: ns });
    await waitGone(cluster, ns, "reuse-new");
    assert.notEqual(
      await db.canLogIn(ip, POD_USER, POD_PASSWORD),
      true,
      "the account with the last pod",
    );
  });
});
