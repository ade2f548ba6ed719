// Basic authentication in the request path, over real sockets, on both the fast path and Node's
// HTTP path, and on upgrades: 401 with the realm's challenge until the credentials match an entry
// of the auth-secret (made by Apache's htpasswd), then the backend, without the Authorization
// header. A missing Secret answers 503. A cost-12 bcrypt check on one host does not hold requests
// to other hosts: they complete while it is still being checked.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { after, before, describe, it } from "node:test";
import { startDataPlane, type DataPlane } from "../data-plane";
import { endpointSlice, ingress, view } from "../routing/testkit";
import type { AuthSecret } from "../view";
import { ask, namedBackend, upgradeHead, type AskOptions, type Backend } from "./testkit";

const P = "nginx.ingress.kubernetes.io/";

const PATHS: [string, Record<string, string>][] = [
  ["fast path", {}],
  ["Node's path", { connection: "keep-alive, x-via", "x-via": "node" }],
];

const htpasswd = (flags: string[], user: string, password: string): string =>
  execFileSync("htpasswd", ["-nb", ...flags, user, password], { encoding: "utf8" }).trim();

const b64 = (text: string) => Buffer.from(text, "latin1").toString("base64");
const basic = (user: string, password: string) => `Basic ${b64(`${user}:${password}`)}`;

function secret(name: string, data: Record<string, string>): AuthSecret {
  const encoded = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)]));
  return { namespace: "default", name, data: encoded };
}

/** An upgrade request, with these credentials; the head of the answer. */
function upgrade(port: number, host: string, authorization?: string): Promise<string> {
  const lines = authorization === undefined ? "" : `Authorization: ${authorization}\r\n`;
  return upgradeHead(port, host, { lines });
}

describe("data plane: basic authentication", () => {
  let main: Backend;
  let plane: DataPlane;
  const users = [
    htpasswd(["-B", "-C", "4"], "alice", "wonderland"),
    htpasswd(["-m"], "bob", "builder"),
    htpasswd(["-s"], "carol", "s:h:a"),
  ].join("\n");

  before(async () => {
    main = await namedBackend("main");
    plane = await startDataPlane({ httpPort: 0, host: "127.0.0.1", defaultCertificates: [] });
    const slice = endpointSlice({
      service: "main",
      ports: [{ port: main.port }],
      endpoints: [{ address: "127.0.0.1" }],
    });
    const route = (name: string, annotations: Record<string, string>) =>
      ingress({
        name,
        annotations,
        rules: [{ host: `${name}.test`, paths: [{ path: "/", service: "main" }] }],
      });
    const auth = (secretName: string, more: Record<string, string> = {}) => ({
      [`${P}auth-type`]: "basic",
      [`${P}auth-secret`]: secretName,
      ...more,
    });
    const applied = await plane.apply({
      ...view(
        1,
        [
          route("file", auth("users", { [`${P}auth-realm`]: "Authentication Required - foo" })),
          route("map", auth("default/mapped", { [`${P}auth-secret-type`]: "auth-map" })),
          route("missing", auth("nowhere")),
          route("nokey", auth("mapped")),
          route("slow", auth("slow")),
          route("open", {}),
        ],
        [slice],
      ),
      authSecrets: [
        secret("users", { auth: `${users}\n` }),
        secret("mapped", {
          dave: "{PLAIN}dave-pw",
          erin: htpasswd(["-m"], "x", "erin-pw").slice(2),
        }),
        // One user per request path: a password that passed once is remembered.
        secret("slow", {
          auth: PATHS.map((_, i) => htpasswd(["-B", "-C", "12"], `slow${i}`, "patience")).join(
            "\n",
          ),
        }),
      ],
    });
    assert.ok(
      applied.problems.some(p => /nowhere.*not found/.test(p)),
      applied.problems.join("\n"),
    );
    assert.ok(
      applied.problems.some(p => /mapped has no key "auth"/.test(p)),
      applied.problems.join("\n"),
    );
  });
  after(async () => {
    await plane.close({ drainMs: 200 });
    await main.close();
  });

  for (const [index, [label, via]] of PATHS.entries()) {
    const send = (host: string, options: AskOptions = {}) =>
      ask(plane.httpPort, host, "/", { ...options, headers: { ...via, ...options.headers } });
    const as = (authorization: string) => ({ headers: { authorization } });

    describe(label, () => {
      it("answers 401 with the realm's challenge when no credentials come", async () => {
        const answer = await send("file.test");
        assert.equal(answer.status, 401);
        assert.equal(
          answer.headers["www-authenticate"],
          'Basic realm="Authentication Required - foo"',
        );
        const noRealm = await send("map.test");
        assert.equal(noRealm.headers["www-authenticate"], 'Basic realm=""');
      });

      it("answers 401 to a wrong password, an unknown user, another scheme, broken base64", async () => {
        for (const authorization of [
          basic("alice", "wrong"),
          basic("bob", "Builder"),
          basic("mallory", "wonderland"),
          basic("", "wonderland"),
          "Bearer abc",
          "Basic !!!",
        ]) {
          assert.equal((await send("file.test", as(authorization))).status, 401, authorization);
        }
      });

      it("serves bcrypt, apr1 and {SHA} users, and keeps Authorization from the backend", async () => {
        for (const [user, password] of [
          ["alice", "wonderland"],
          ["bob", "builder"],
          ["carol", "s:h:a"],
        ]) {
          const answer = await send("file.test", as(basic(user!, password!)));
          assert.equal(answer.status, 200, `${user}`);
          const headers = (JSON.parse(answer.body) as { headers: Record<string, string> }).headers;
          assert.equal(headers.authorization, undefined, "credentials are not forwarded");
        }
        // Remembered now: the same again is served without a new check.
        assert.equal((await send("file.test", as(basic("alice", "wonderland")))).status, 200);
      });

      it("serves auth-map users", async () => {
        assert.equal((await send("map.test", as(basic("dave", "dave-pw")))).status, 200);
        assert.equal((await send("map.test", as(basic("erin", "erin-pw")))).status, 200);
        assert.equal((await send("map.test", as(basic("erin", "dave-pw")))).status, 401);
      });

      it("answers 503 while the Secret is missing or has no users file, never serving it open", async () => {
        for (const host of ["missing.test", "nokey.test"]) {
          assert.equal((await send(host, as(basic("alice", "wonderland")))).status, 503, host);
          assert.equal((await send(host)).status, 503, host);
        }
      });

      it("serves another host while a cost-12 bcrypt check is still running", async () => {
        const order: string[] = [];
        const slow = send("slow.test", as(basic(`slow${index}`, "patience"))).then(answer => {
          order.push(`slow ${answer.status}`);
        });
        const others = Promise.all([
          send("open.test").then(answer => order.push(`open ${answer.status}`)),
          send("file.test", as(basic("bob", "builder"))).then(a => order.push(`file ${a.status}`)),
        ]);
        await others;
        order.push("others done");
        await slow;
        assert.deepEqual(order.slice(2), ["others done", "slow 200"]);
        assert.deepEqual(order.slice(0, 2).sort(), ["file 200", "open 200"]);
      });
    });
  }

  it("answers an upgrade without credentials 401 with the challenge, and forwards one with them", async () => {
    const refused = await upgrade(plane.httpPort, "file.test");
    assert.match(refused, /^HTTP\/1\.1 401 /);
    assert.match(refused, /WWW-Authenticate: Basic realm="Authentication Required - foo"/i);
    assert.match(
      await upgrade(plane.httpPort, "file.test", basic("alice", "nope")),
      /^HTTP\/1\.1 401 /,
    );
    const passed = await upgrade(plane.httpPort, "file.test", basic("bob", "builder"));
    assert.doesNotMatch(passed, /^HTTP\/1\.1 (401|503) /);
  });
});
