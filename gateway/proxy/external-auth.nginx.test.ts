// auth-url against Debian's nginx `auth_request` (nginx -V: --with-http_auth_request_module),
// configured as ingress-nginx's template renders auth-url and auth-response-headers: for each
// status the auth server answers (and for an auth server that is down), the client's status, the
// WWW-Authenticate it gets, the header the backend sees and the Set-Cookie passed on must be the
// same. The auth server answers what the client asks for in X-Want-Status (client headers reach
// it on both). Not compared: auth-signin (nginx-light lacks set-misc's set_escape_uri).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureNginx, nginxConfig, startNginx, stopNginx } from "../../hack/nginx";
import { freePort } from "../../hack/control-plane/ports";
import { startDataPlane, type DataPlane } from "../data-plane";
import { endpointSlice, ingress, view } from "../routing/testkit";
import { ask, closedPort, namedBackend, startBackend, type Answer, type Backend } from "./testkit";

const P = "nginx.ingress.kubernetes.io/";

/** Answers X-Want-Status with X-User (unless X-Omit-User), WWW-Authenticate and a cookie. */
function startAuthServer(): Promise<Backend> {
  return startBackend((req, res) => {
    const status = Number(req.headers["x-want-status"] ?? 200);
    const headers: Record<string, string> = {
      "www-authenticate": 'Basic realm="differential"',
      "set-cookie": "session=refreshed; Path=/",
    };
    if (req.headers["x-omit-user"] === undefined) headers["x-user"] = "alice";
    res.writeHead(status, headers);
    res.end(status === 204 || status === 304 ? undefined : "auth body");
  });
}

function nginxAuthConfig(dir: string, port: number, auth: string, backend: number): string {
  const server = (listen: number, authUrl: string) => `
  server {
    listen 127.0.0.1:${listen};
    location = /_external-auth {
      internal;
      proxy_pass_request_body off;
      proxy_set_header Content-Length "";
      proxy_set_header X-Original-URL $scheme://$http_host$request_uri;
      proxy_set_header X-Original-Method $request_method;
      proxy_pass ${authUrl};
    }
    location / {
      auth_request /_external-auth;
      auth_request_set $auth_cookie $upstream_http_set_cookie;
      add_header Set-Cookie $auth_cookie;
      auth_request_set $authHeader0 $upstream_http_x_user;
      proxy_set_header 'X-User' $authHeader0;
      proxy_pass http://127.0.0.1:${backend};
    }
  }`;
  return nginxConfig(dir, 1, `${server(port, auth)}`);
}

interface Seen {
  status: number;
  wwwAuthenticate: unknown;
  user: string | undefined;
  cookie: unknown;
}

function seen(answer: Answer): Seen {
  const echoed =
    answer.headers["x-backend"] === undefined
      ? undefined
      : (JSON.parse(answer.body) as { headers: Record<string, string> });
  return {
    status: answer.status,
    wwwAuthenticate: answer.headers["www-authenticate"],
    user: echoed?.headers["x-user"],
    cookie: answer.headers["set-cookie"],
  };
}

describe("external auth against nginx auth_request", () => {
  let dir: string;
  let backend: Backend;
  let auth: Backend;
  let nginx: ChildProcess;
  let nginxDown: ChildProcess;
  let plane: DataPlane;
  let nginxPort: number;
  let nginxDownPort: number;

  before(async () => {
    ensureNginx();
    dir = mkdtempSync(join(tmpdir(), "bulwark-auth-nginx-"));
    backend = await namedBackend("main");
    auth = await startAuthServer();
    const down = await closedPort();
    nginxPort = await freePort();
    nginxDownPort = await freePort();
    nginx = await startNginx(
      dir,
      "auth",
      nginxAuthConfig(dir, nginxPort, `http://127.0.0.1:${auth.port}/auth`, backend.port),
    );
    nginxDown = await startNginx(
      dir,
      "auth-down",
      nginxAuthConfig(dir, nginxDownPort, `http://127.0.0.1:${down}/auth`, backend.port),
    );
    plane = await startDataPlane({ httpPort: 0, host: "127.0.0.1", defaultCertificates: [] });
    const slice = endpointSlice({
      service: "main",
      ports: [{ port: backend.port }],
      endpoints: [{ address: "127.0.0.1" }],
    });
    const route = (name: string, host: string, authUrl: string) =>
      ingress({
        name,
        annotations: { [`${P}auth-url`]: authUrl, [`${P}auth-response-headers`]: "X-User" },
        rules: [{ host, paths: [{ path: "/", service: "main" }] }],
      });
    await plane.apply(
      view(
        1,
        [
          route("up", "up.test", `http://127.0.0.1:${auth.port}/auth`),
          route("down", "down.test", `http://127.0.0.1:${down}/auth`),
        ],
        [slice],
      ),
    );
  });

  after(async () => {
    await plane?.close({ drainMs: 200 });
    if (nginx !== undefined) await stopNginx(nginx);
    if (nginxDown !== undefined) await stopNginx(nginxDown);
    await backend?.close();
    await auth?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const STATUSES = [200, 201, 202, 204, 206, 299, 301, 302, 304, 400, 401, 403, 404, 407, 500, 503];

  for (const status of STATUSES) {
    it(`answers as nginx when the auth server answers ${status}`, async () => {
      const headers = { "x-want-status": String(status), "x-user": "forged" };
      const ours = seen(await ask(plane.httpPort, "up.test", "/p?q=1", { headers }));
      const theirs = seen(await ask(nginxPort, "up.test", "/p?q=1", { headers }));
      assert.deepEqual(ours, theirs);
    });
  }

  it("drops the client's forged header as nginx does when the auth answer lacks it", async () => {
    const headers = { "x-omit-user": "1", "x-user": "forged" };
    const ours = seen(await ask(plane.httpPort, "up.test", "/", { headers }));
    const theirs = seen(await ask(nginxPort, "up.test", "/", { headers }));
    assert.deepEqual(ours, theirs);
    assert.equal(ours.user, undefined);
  });

  it("answers 500 as nginx does when the auth server is down", async () => {
    const ours = seen(await ask(plane.httpPort, "down.test", "/"));
    const theirs = seen(await ask(nginxDownPort, "down.test", "/"));
    assert.deepEqual(ours, theirs);
    assert.equal(ours.status, 500);
  });
});
