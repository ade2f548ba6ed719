// Basic authentication end to end: an htpasswd file made by Apache's htpasswd in an Opaque Secret
// (as `kubectl create secret generic --from-file=auth`), an Ingress admitted by the Pepr module
// through the real API server, a real gateway process: a client gets 401 with the realm, then 200
// with the password; the decisions are counted. Admission refuses digest and another namespace's
// Secret; a Secret that goes away turns the route to 503, never open.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { CoreV1Api, KubernetesObjectApi } from "@kubernetes/client-node";
import { ingress } from "../gateway/harness";
import { rejection, testCluster } from "../../harness/cluster";
import { waitUntil } from "../../harness/wait";
import {
  echoOf,
  nginx,
  openGateway,
  openNamespace,
  scrape,
  total,
  type TrafficGateway,
  type TrafficNamespace,
} from "./helpers";

const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;

describe("basic authentication end to end", () => {
  let space: TrafficNamespace;
  let served: TrafficGateway;

  before(async () => {
    space = await openNamespace("traffic-basic-auth", ["web"]);
    const ns = space.ns;
    const file = execFileSync("htpasswd", ["-nbB", "-C", "5", "foo", "bar"], { encoding: "utf8" });
    await space.apply([
      {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "basic-auth", namespace: ns },
        type: "Opaque",
        data: { auth: Buffer.from(file).toString("base64") },
      } as never,
      ingress(ns, "open", { host: "open.test", service: "web" }),
      ingress(ns, "private", {
        host: "private.test",
        service: "web",
        annotations: nginx({
          "auth-type": "basic",
          "auth-secret": "basic-auth",
          "auth-realm": "Authentication Required - foo",
        }),
      }),
    ]);
    served = await openGateway(ns, {}, { host: "open.test", backend: "web" });
  });

  after(async () => {
    await served?.close();
    await space?.close();
  });

  const send = (authorization?: string) =>
    served.client.send("private.test", "/", {
      headers: authorization === undefined ? {} : { authorization },
    });

  it("answers 401 with the realm, then serves the right password without forwarding it", async () => {
    const refused = await waitUntil("private.test answers 401", async () => {
      const answer = await send();
      return answer.status === 401 ? answer : undefined;
    });
    assert.equal(
      refused.headers["www-authenticate"],
      'Basic realm="Authentication Required - foo"',
    );
    assert.equal((await send(basic("foo", "wrong"))).status, 401);
    const answer = await send(basic("foo", "bar"));
    assert.equal(echoOf(answer)?.name, "web");
    assert.equal(echoOf(answer)?.headers.authorization, undefined);
    const samples = await scrape(served.gateway.adminPort);
    const unauthorized = total(samples, "bulwark_gateway_answers_total", {
      host: "private.test",
      decision: "unauthorized",
    });
    assert.ok(unauthorized >= 2, `unauthorized counted ${unauthorized}`);
  });

  it("refuses digest and another namespace's Secret at admission, naming the key", async () => {
    const objects = KubernetesObjectApi.makeApiClient(testCluster().kc);
    const digest = ingress(space.ns, "digest", {
      host: "digest.test",
      service: "web",
      annotations: nginx({ "auth-type": "digest", "auth-secret": "basic-auth" }),
    });
    assert.match(
      await rejection(() => objects.create(digest)),
      /auth-type\\?"\]: expected \\?"basic\\?", got \\?"digest\\?" \(digest authentication is not implemented by Bulwark\)/,
    );
    const elsewhere = ingress(space.ns, "elsewhere", {
      host: "elsewhere.test",
      service: "web",
      annotations: nginx({ "auth-type": "basic", "auth-secret": "kube-system/basic-auth" }),
    });
    assert.match(
      await rejection(() => objects.create(elsewhere)),
      /auth-secret\\?"\]: names a Secret in namespace \\?"kube-system\\?"/,
    );
  });

  it("answers 503 once the Secret is gone, never serving the route open", async () => {
    const core = testCluster().kc.makeApiClient(CoreV1Api);
    await core.deleteNamespacedSecret({ name: "basic-auth", namespace: space.ns });
    const answer = await waitUntil("private.test answers 503", async () => {
      const reply = await send(basic("foo", "bar"));
      return reply.status === 503 ? reply : undefined;
    });
    assert.equal(answer.status, 503);
    assert.equal((await send()).status, 503);
  });
});
