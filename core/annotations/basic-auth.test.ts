import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { reviewIngress } from "../ingress/review-ingress";
import {
  basicAuthNamespaceErrors,
  parseBasicAuth,
  authSecretKey,
  type BasicAuthConfig,
} from "./basic-auth";
import { annotationKey } from "./validators";

const TYPE = annotationKey("auth-type");
const SECRET = annotationKey("auth-secret");
const SECRET_TYPE = annotationKey("auth-secret-type");
const REALM = annotationKey("auth-realm");

function config(annotations: Record<string, string>): BasicAuthConfig {
  const parsed = parseBasicAuth(annotations);
  assert.ok(parsed.ok, JSON.stringify(parsed));
  assert.ok(parsed.value !== undefined);
  return parsed.value;
}

function errorsOf(annotations: Record<string, string>): string[] {
  const parsed = parseBasicAuth(annotations);
  assert.equal(parsed.ok, false, `expected a denial for ${JSON.stringify(annotations)}`);
  return parsed.ok ? [] : parsed.errors.map(e => `${e.field}: ${e.message}`);
}

/** The whole admission review of an Ingress in namespace "shop" with these annotations. */
function reviewOf(annotations: Record<string, string>) {
  const path = {
    path: "/",
    pathType: "Prefix",
    backend: { service: { name: "s", port: { number: 80 } } },
  };
  return reviewIngress(
    {
      metadata: { name: "web", namespace: "shop", annotations },
      spec: { rules: [{ host: "a.test", http: { paths: [path] } }] },
    },
    () => undefined,
  );
}

describe("basic-auth annotations", () => {
  it("reads nothing when none is set", () => {
    assert.deepEqual(parseBasicAuth({}), { ok: true, value: undefined, warnings: [] });
  });

  it("reads ingress-nginx's documented example (docs/examples/auth/basic)", () => {
    const c = config({
      [TYPE]: "basic",
      [SECRET]: "basic-auth",
      [REALM]: "Authentication Required - foo",
    });
    assert.deepEqual(c, {
      type: "basic",
      secret: { namespace: undefined, name: "basic-auth" },
      secretType: "auth-file",
      realm: "Authentication Required - foo",
    });
    assert.equal(authSecretKey(c, "default"), "default/basic-auth");
  });

  it("defaults as ingress-nginx: auth-file and an empty realm", () => {
    const c = config({ [TYPE]: "basic", [SECRET]: "users" });
    assert.equal(c.secretType, "auth-file");
    assert.equal(c.realm, "");
  });

  it("reads auth-map and namespace/name, spaces removed as ingress-nginx removes them", () => {
    const c = config({ [TYPE]: " basic ", [SECRET]: "shop / users", [SECRET_TYPE]: "auth-map " });
    assert.deepEqual(c.secret, { namespace: "shop", name: "users" });
    assert.equal(c.secretType, "auth-map");
    assert.equal(authSecretKey(c, "shop"), "shop/users");
  });

  it("refuses digest, naming it as not implemented", () => {
    const [error] = errorsOf({ [TYPE]: "digest", [SECRET]: "users" });
    assert.match(
      error!,
      /auth-type.*expected "basic", got "digest" \(digest authentication is not implemented/,
    );
  });

  it("refuses what ingress-nginx's unanchored regex would let through, and other types", () => {
    for (const value of ["basicx", "Basic", "BASIC", "", "none", "xdigest"]) {
      const [error] = errorsOf({ [TYPE]: value, [SECRET]: "users" });
      assert.match(error!, /auth-type"\]: expected "basic"/, value);
    }
  });

  it("refuses auth-type without auth-secret (ingress-nginx denies the location at request time)", () => {
    const [error] = errorsOf({ [TYPE]: "basic" });
    assert.match(error!, /auth-type"\]: needs nginx.ingress.kubernetes.io\/auth-secret/);
  });

  it("refuses auth-secret, auth-secret-type or auth-realm without auth-type (ingress-nginx would serve the route open)", () => {
    const errors = errorsOf({ [SECRET]: "users", [SECRET_TYPE]: "auth-map", [REALM]: "x" });
    assert.equal(errors.length, 3);
    for (const error of errors)
      assert.match(error, /needs nginx.ingress.kubernetes.io\/auth-type: "basic"/);
  });

  it("refuses malformed Secret names", () => {
    for (const value of [
      "",
      "a/b/c",
      "Users",
      "../etc",
      "ns/",
      "/name",
      "user$",
      "a_b",
      "x".repeat(254),
    ]) {
      const [error] = errorsOf({ [TYPE]: "basic", [SECRET]: value });
      assert.match(
        error!,
        /auth-secret"\]: expected a Secret as "name" or "namespace\/name"/,
        value,
      );
    }
  });

  it("refuses an unknown auth-secret-type", () => {
    for (const value of ["file", "auth-files", "", "AUTH-FILE"]) {
      const [error] = errorsOf({ [TYPE]: "basic", [SECRET]: "u", [SECRET_TYPE]: value });
      assert.match(error!, /auth-secret-type"\]: expected "auth-file" or "auth-map"/, value);
    }
  });

  it('refuses a realm outside ingress-nginx\'s characters (quotes, CR/LF) and "off"', () => {
    for (const value of ['say "hi"', "a\r\nX-Evil: 1", "a\\", "ünicode", "a,b", "off"]) {
      const [error] = errorsOf({ [TYPE]: "basic", [SECRET]: "u", [REALM]: value });
      assert.match(error!, /auth-realm"\]: expected text of letters/, JSON.stringify(value));
    }
    assert.match(
      errorsOf({ [TYPE]: "basic", [SECRET]: "u", [REALM]: "off" })[0]!,
      /authentication off/,
    );
    assert.equal(
      config({ [TYPE]: "basic", [SECRET]: "u", [REALM]: "Off limits: staff/admins" }).realm,
      "Off limits: staff/admins",
    );
  });

  it("refuses a Secret of another namespace, at admission", () => {
    const c = config({ [TYPE]: "basic", [SECRET]: "other/users" });
    assert.deepEqual(basicAuthNamespaceErrors(c, "other"), []);
    const [error] = basicAuthNamespaceErrors(c, "shop");
    assert.match(error!.message, /namespace "other": only the Ingress's own namespace \("shop"\)/);
    const review = reviewOf({ [TYPE]: "basic", [SECRET]: "other/users" });
    assert.equal(review.errors.length, 1, JSON.stringify(review.errors));
    assert.match(review.errors[0]!.field, /auth-secret/);
  });

  it("admits the documented example through the whole review (no longer an unsupported control)", () => {
    const review = reviewOf({
      [TYPE]: "basic",
      [SECRET]: "basic-auth",
      [REALM]: "Authentication Required - foo",
    });
    assert.deepEqual(review.errors, []);
  });
});
