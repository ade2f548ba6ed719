import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { KubeConfig } from "@kubernetes/client-node";
import { makeCertificate } from "../test/fixtures/certificates";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KeptAliveApi, ApiCallError, keptAliveApi } from "./kept-alive-api";
import { isNotFound } from "./api-errors";

// An HTTPS server in the API server's place, counting TLS handshakes and the tokens it is sent.
describe("KeptAliveApi", () => {
  const cert = makeCertificate({ key: "ecdsa", dnsNames: ["localhost"] });
  let server: Server;
  let handshakes = 0;
  const tokens: string[] = [];
  let reader: KeptAliveApi;
  const THINGS = 1201;
  const listQueries: Record<string, string>[] = [];
  /** The continue token the stand-in answers 410 Gone (expired) for; -1: none. */
  let expiredAt = -1;

  /** A kubeconfig for the server, trusting `caPem`, with a token. */
  function kubeconfig(caPem: string): KubeConfig {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [
        {
          name: "c",
          server: `https://localhost:${(server.address() as AddressInfo).port}`,
          caData: Buffer.from(caPem).toString("base64"),
        },
      ],
      users: [{ name: "u", token: "t0ken" }],
      contexts: [{ name: "x", cluster: "c", user: "u" }],
      currentContext: "x",
    });
    return kc;
  }

  before(async () => {
    server = createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
      tokens.push(req.headers.authorization ?? "");
      if (req.method === "PATCH") {
        let text = "";
        req.setEncoding("utf8");
        req.on("data", (chunk: string) => (text += chunk));
        req.on("end", () => {
          res.writeHead(200, { "content-type": "application/json" });
          res.end(JSON.stringify({ type: req.headers["content-type"], ops: JSON.parse(text) }));
        });
        return;
      }
      if (req.method === "POST") {
        let text = "";
        req.setEncoding("utf8");
        req.on("data", (chunk: string) => (text += chunk));
        req.on("end", () => {
          const allowed = req.url === "/api/v1/namespaces/shop/events";
          const json = req.headers["content-type"] === "application/json";
          res.writeHead(allowed && json ? 201 : 403, { "content-type": "application/json" });
          res.end(
            allowed && json
              ? JSON.stringify({ ...JSON.parse(text), metadata: { name: "web.1" } })
              : JSON.stringify({ kind: "Status", message: "events is forbidden", code: 403 }),
          );
        });
        return;
      }
      const url = new URL(req.url ?? "/", "https://localhost");
      if (url.pathname === "/api/v1/things") {
        // 1 201 things, served in pages as the API server does: limit, then a continue token.
        listQueries.push(Object.fromEntries(url.searchParams));
        if (url.searchParams.get("continue") === String(expiredAt)) {
          res.writeHead(410, { "content-type": "application/json" });
          res.end(JSON.stringify({ kind: "Status", reason: "Expired", code: 410 }));
          return;
        }
        const limit = Number(url.searchParams.get("limit") ?? THINGS);
        const from = Number(url.searchParams.get("continue") ?? "0");
        const to = Math.min(THINGS, from + limit);
        const items = Array.from({ length: to - from }, (_, i) => ({ n: from + i }));
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ items, metadata: { continue: to < THINGS ? String(to) : "" } }));
        return;
      }
      if (req.url === "/api/v1/forbidden") {
        res.writeHead(403, { "content-type": "application/json" });
        res.end(JSON.stringify({ kind: "Status", message: "forbidden", code: 403 }));
        return;
      }
      if (req.url === "/api/v1/namespaces/shop/secrets/web-tls") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ kind: "Secret", metadata: { name: "web-tls" } }));
        return;
      }
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ kind: "Status", message: 'secrets "gone" not found', code: 404 }));
    });
    server.on("secureConnection", () => handshakes++);
    await new Promise<void>(resolve => server.listen(0, "127.0.0.1", resolve));
    reader = new KeptAliveApi(kubeconfig(cert.certPem));
  });
  after(() => server.close());

  it("reads over one kept-alive TLS connection, with the kubeconfig's token and CA", async () => {
    const before = handshakes;
    for (let i = 0; i < 20; i++) {
      const secret = await reader.get<{ metadata: { name: string } }>(
        "/api/v1/namespaces/shop/secrets/web-tls",
      );
      assert.equal(secret.metadata.name, "web-tls");
    }
    assert.ok(
      handshakes - before <= 1,
      `${handshakes - before} handshakes for 20 sequential reads`,
    );
    assert.ok(tokens.every(t => t === "Bearer t0ken"));
  });

  it("creates over the same kept-alive connection, as JSON, answering the stored object", async () => {
    const before = handshakes;
    for (let i = 0; i < 20; i++) {
      const stored = await reader.post<{ reason: string; metadata: { name: string } }>(
        "/api/v1/namespaces/shop/events",
        { reason: "Injected", metadata: { generateName: "web." } },
      );
      assert.deepEqual([stored.reason, stored.metadata.name], ["Injected", "web.1"]);
    }
    assert.ok(handshakes - before <= 1, `${handshakes - before} handshakes for 20 creates`);
    const refused = await reader.post("/api/v1/namespaces/other/events", {}).then(
      () => assert.fail("a 403 resolved"),
      (e: unknown) => e,
    );
    assert.ok(refused instanceof ApiCallError);
    assert.equal(refused.status, 403);
    assert.match(
      refused.message,
      /^POST \/api\/v1\/namespaces\/other\/events: events is forbidden$/,
    );
  });

  it("sends a JSON Patch as one, on the same connection", async () => {
    const before = handshakes;
    const ops = [
      { op: "test", path: "/metadata/finalizers/0", value: "stke.io/podpermission-protection" },
      { op: "remove", path: "/metadata/finalizers/0" },
    ];
    const answer = await reader.jsonPatch<{ type: string; ops: object[] }>(
      "/api/v1/namespaces/shop/pods/web",
      ops,
    );
    assert.deepEqual(answer, { type: "application/json-patch+json", ops });
    assert.ok(handshakes - before <= 1);
  });

  it("sends a merge patch as one", async () => {
    const answer = await reader.mergePatch<{ type: string; ops: object }>(
      "/apis/bulwark.dev/v1alpha1/namespaces/shop/permissiongroups/web/status",
      { status: { observedGeneration: 2 } },
    );
    assert.deepEqual(answer, {
      type: "application/merge-patch+json",
      ops: { status: { observedGeneration: 2 } },
    });
  });

  it("lists a collection page by page, each page with the caller's selectors", async () => {
    listQueries.length = 0;
    const items = await reader.list<{ n: number }>("/api/v1/things", {
      labelSelector: "app=web",
    });
    assert.deepEqual(
      items.map(item => item.n),
      Array.from({ length: THINGS }, (_, i) => i),
    );
    assert.deepEqual(listQueries, [
      { labelSelector: "app=web", limit: "500" },
      { labelSelector: "app=web", limit: "500", continue: "500" },
      { labelSelector: "app=web", limit: "500", continue: "1000" },
    ]);
  });

  it("answers an expired continue token with one full list, as client-go's pager does", async () => {
    listQueries.length = 0;
    expiredAt = 1000;
    try {
      const items = await reader.list<{ n: number }>("/api/v1/things", {
        labelSelector: "app=web",
      });
      assert.equal(items.length, THINGS, "every object once: the pages before are not kept");
      assert.deepEqual(new Set(items.map(item => item.n)).size, THINGS);
      assert.deepEqual(listQueries.at(-1), { labelSelector: "app=web" }, "unpaged");
      assert.equal(listQueries.length, 4);
    } finally {
      expiredAt = -1;
    }
  });

  it("fails a read the API server refuses with its status and its Status message", async () => {
    const error = await reader.get("/api/v1/namespaces/shop/secrets/gone").then(
      () => assert.fail("a 404 resolved"),
      (e: unknown) => e,
    );
    assert.ok(error instanceof ApiCallError);
    assert.ok(isNotFound(error));
    assert.match(error.message, /secrets "gone" not found/);
  });

  it("reads a missing object as undefined, and fails on any other refusal", async () => {
    assert.equal(await reader.getIfExists("/api/v1/namespaces/shop/secrets/gone"), undefined);
    const found = await reader.getIfExists<{ metadata: { name: string } }>(
      "/api/v1/namespaces/shop/secrets/web-tls",
    );
    assert.equal(found?.metadata.name, "web-tls");
    await assert.rejects(reader.getIfExists("/api/v1/forbidden"), (error: unknown) => {
      assert.ok(error instanceof ApiCallError);
      assert.equal(error.status, 403);
      return true;
    });
  });

  it("refuses a server whose certificate the kubeconfig's CA does not sign", async () => {
    const other = makeCertificate({ key: "ecdsa", dnsNames: ["localhost"] });
    await assert.rejects(
      new KeptAliveApi(kubeconfig(other.certPem)).get("/api/v1/namespaces/shop/secrets/web-tls"),
      /self[- ]signed|unable to verify|certificate/i,
    );
  });

  it("follows KUBECONFIG when it is pointed elsewhere, as Pepr's client does", async () => {
    const dir = mkdtempSync(join(tmpdir(), "kept-alive-"));
    const saved = process.env.KUBECONFIG;
    try {
      const files = ["one", "two"].map(token => {
        const kc = kubeconfig(cert.certPem);
        kc.users[0] = { name: "u", token };
        const file = join(dir, token);
        writeFileSync(file, kc.exportConfig());
        return file;
      });
      process.env.KUBECONFIG = files[0];
      const first = keptAliveApi();
      assert.equal(keptAliveApi(), first, "the same client while KUBECONFIG stays");
      await first.get("/api/v1/namespaces/shop/secrets/web-tls");
      process.env.KUBECONFIG = files[1];
      const second = keptAliveApi();
      assert.notEqual(second, first);
      await second.get("/api/v1/namespaces/shop/secrets/web-tls");
      assert.deepEqual(tokens.slice(-2), ["Bearer one", "Bearer two"]);
    } finally {
      process.env.KUBECONFIG = saved;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
