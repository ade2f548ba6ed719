// An HTTP/1.1 request to a gRPC route (backend-protocol GRPC): the backend is spoken to over
// HTTP/2 only, so neither HTTP/1.1 path sends it anything; the client gets 502.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startDataPlane, type DataPlane } from "../../data-plane";
import { ask, hostsView, startBackend, type Backend } from "../testkit";

const PATHS: [string, Record<string, string>][] = [
  ["fast path", {}],
  ["Node's path", { connection: "keep-alive, x-via", "x-via": "node" }],
];

describe("data plane: HTTP/1.1 requests to a gRPC route", () => {
  let backend: Backend;
  let plane: DataPlane;
  let asked = 0;

  before(async () => {
    backend = await startBackend((req, res) => {
      asked++;
      req.resume();
      res.end("spoken to over HTTP/1.1");
    });
    plane = await startDataPlane({ httpPort: 0, host: "127.0.0.1", defaultCertificates: [] });
    await plane.apply(
      hostsView("app", backend.port, {
        grpc: { "nginx.ingress.kubernetes.io/backend-protocol": "GRPC" },
        web: {},
      }),
    );
  });
  after(async () => {
    await plane.close({ drainMs: 200 });
    await backend.close();
  });

  for (const [label, headers] of PATHS) {
    it(`answers 502 on ${label} and sends the backend nothing`, async () => {
      const before = asked;
      assert.equal(
        (await ask(plane.httpPort, "grpc.test", "/pkg.Svc/Call", { headers })).status,
        502,
      );
      assert.equal(asked, before);
      assert.equal((await ask(plane.httpPort, "web.test", "/", { headers })).status, 200);
      assert.equal(asked, before + 1);
    });
  }
});
