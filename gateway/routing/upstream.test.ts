import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseUpstream, type UpstreamConfig } from "../../core/annotations";
import type { TlsPair } from "../view";
import { compileUpstream, poolKey, upstreamTlsFor, type UpstreamPolicy } from "./upstream";

const P = "nginx.ingress.kubernetes.io/";

function config(annotations: Record<string, string>): UpstreamConfig {
  const parsed = parseUpstream(annotations);
  assert.ok(parsed.ok && parsed.value !== undefined);
  return parsed.value;
}

const CA = { namespace: "app", name: "ca", cert: "", key: "", ca: "not checked without verify" };
const pairs = new Map<string, TlsPair>([["app/ca", CA]]);

function compile(annotations: Record<string, string>, rewrites = false) {
  return compileUpstream({ config: config(annotations), namespace: "app", rewrites, pairs });
}

function policy(annotations: Record<string, string>): UpstreamPolicy {
  const outcome = compile(annotations);
  assert.ok(outcome.ok && outcome.upstream !== undefined, JSON.stringify(outcome));
  return outcome.upstream;
}

describe("compileUpstream", () => {
  it("leaves plain HTTP without edits as no policy at all", () => {
    assert.deepEqual(compile({ [`${P}backend-protocol`]: "http" }), {
      ok: true,
      upstream: undefined,
    });
  });

  it("sends X-Forwarded-Prefix only with a rewrite-target, as ingress-nginx's buildProxyPass", () => {
    const annotations = { [`${P}x-forwarded-prefix`]: "/p", [`${P}upstream-vhost`]: "in.test" };
    const without = compile(annotations);
    const withRewrite = compile(annotations, true);
    assert.ok(without.ok && withRewrite.ok);
    assert.deepEqual(without.upstream?.requestEdits?.set, [["Host", "in.test"]]);
    assert.deepEqual(withRewrite.upstream?.requestEdits?.set, [
      ["Host", "in.test"],
      ["X-Forwarded-Prefix", "/p"],
    ]);
  });

  it("refuses a Secret of another namespace, a missing one, and verify without ca.crt", () => {
    const https = { [`${P}backend-protocol`]: "HTTPS" };
    const refusal = (extra: Record<string, string>) => {
      const outcome = compile({ ...https, ...extra });
      return outcome.ok ? "" : outcome.refusal;
    };
    assert.match(refusal({ [`${P}proxy-ssl-secret`]: "other/ca" }), /another namespace/);
    assert.match(refusal({ [`${P}proxy-ssl-secret`]: "app/absent" }), /app\/absent not found/);
    pairs.set("app/pair-only", { namespace: "app", name: "pair-only", cert: "x", key: "y" });
    assert.match(
      refusal({
        [`${P}proxy-ssl-secret`]: "app/pair-only",
        [`${P}proxy-ssl-verify`]: "on",
        [`${P}proxy-ssl-name`]: "b.test",
      }),
      /no ca\.crt/,
    );
  });

  it("gives verified and unverified TLS to one address different pool keys", () => {
    const off = policy({ [`${P}backend-protocol`]: "HTTPS" }).tls!;
    const again = policy({ [`${P}backend-protocol`]: "HTTPS" }).tls!;
    const on = policy({
      [`${P}backend-protocol`]: "HTTPS",
      [`${P}proxy-ssl-verify`]: "on",
      [`${P}proxy-ssl-name`]: "b.test",
    }).tls!;
    assert.equal(off.id, again.id);
    assert.notEqual(poolKey("10.0.0.1:443", off), poolKey("10.0.0.1:443", on));
    assert.notEqual(poolKey("10.0.0.1:443", off), "10.0.0.1:443");
    assert.equal(off.options.servername, "", "no SNI unless proxy-ssl-server-name is on");
    assert.equal(on.options.rejectUnauthorized, true);
  });

  it("AUTO_HTTP uses TLS only for requests that came over HTTPS", () => {
    const auto = policy({ [`${P}backend-protocol`]: "AUTO_HTTP" });
    assert.equal(upstreamTlsFor(auto, false), undefined);
    assert.equal(upstreamTlsFor(auto, true), auto.tls);
  });

  it("GRPC is HTTP/2 without TLS, GRPCS with it; other protocols are not gRPC", () => {
    const grpc = policy({ [`${P}backend-protocol`]: "GRPC" });
    assert.equal(grpc.grpc, true);
    assert.equal(upstreamTlsFor(grpc, true), undefined);
    const grpcs = policy({ [`${P}backend-protocol`]: "GRPCS" });
    assert.equal(grpcs.grpc, true);
    assert.notEqual(upstreamTlsFor(grpcs, false), undefined);
    assert.equal(policy({ [`${P}backend-protocol`]: "HTTPS" }).grpc, false);
  });
});
