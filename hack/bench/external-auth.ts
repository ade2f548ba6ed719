// auth-url's cost: wrk through one Bulwark process (no auth; auth-url; with auth-keepalive; with
// auth-cache-key) and through Debian's nginx with auth_request to the same auth server, in the
// same run. The auth server is our oauth2-proxy stand-in (express) on loopback, in a process of
// its own with the backend (external-auth-servers.ts), so the numbers include its cost; they
// compare, they do not predict production.
//   npx tsx hack/bench/external-auth.ts [seconds]
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { startDataPlane } from "../../gateway/data-plane";
import { endpointSlice, ingress, view } from "../../gateway/routing/testkit";
import { freePort } from "../control-plane/ports";
import { ensureNginx, nginxConfig, startNginx, stopNginx } from "../nginx";

const P = "nginx.ingress.kubernetes.io/";
const COOKIE = "_oauth2_proxy=bench-token";

async function wrk(port: number, host: string, seconds: number): Promise<string> {
  const { stdout } = await promisify(execFile)("/usr/bin/wrk", [
    "-t1",
    "-c16",
    `-d${seconds}s`,
    "--latency",
    "-H",
    `Host: ${host}`,
    "-H",
    `Cookie: ${COOKIE}`,
    `http://127.0.0.1:${port}/hello`,
  ]);
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1] ?? "?";
  const p50 = /\s50%\s+(\S+)/.exec(stdout)?.[1] ?? "?";
  const p99 = /\s99%\s+(\S+)/.exec(stdout)?.[1] ?? "?";
  const bad = /Non-2xx or 3xx responses:\s+(\d+)/.exec(stdout)?.[1] ?? "0";
  return `${rps} req/s, p50 ${p50}, p99 ${p99}, non-2xx ${bad}`;
}

async function main(): Promise<void> {
  const seconds = Number(process.argv[2] ?? 5);
  ensureNginx();
  const servers = spawn(
    process.execPath,
    ["--import", "tsx", join(__dirname, "external-auth-servers.ts")],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const ports = await new Promise<{ backend: number; auth: number }>(resolve =>
    servers.stdout.once("data", (data: Buffer) => resolve(JSON.parse(data.toString()))),
  );
  const backend = { port: ports.backend };
  const authUrl = `http://127.0.0.1:${ports.auth}/oauth2/auth`;
  const plane = await startDataPlane({ httpPort: 0, host: "127.0.0.1", defaultCertificates: [] });
  const route = (name: string, annotations: Record<string, string>) =>
    ingress({
      name,
      annotations,
      rules: [{ host: `${name}.bench`, paths: [{ path: "/", service: "main" }] }],
    });
  const headers = { [`${P}auth-response-headers`]: "X-Auth-Request-User" };
  await plane.apply(
    view(
      1,
      [
        route("open", {}),
        route("auth", { [`${P}auth-url`]: authUrl, ...headers }),
        route("pooled", { [`${P}auth-url`]: authUrl, [`${P}auth-keepalive`]: "32", ...headers }),
        route("cached", {
          [`${P}auth-url`]: authUrl,
          [`${P}auth-cache-key`]: "$cookie__oauth2_proxy",
          ...headers,
        }),
      ],
      [
        endpointSlice({
          service: "main",
          ports: [{ port: backend.port }],
          endpoints: [{ address: "127.0.0.1" }],
        }),
      ],
    ),
  );
  const dir = mkdtempSync(join(tmpdir(), "bulwark-auth-bench-"));
  const nginxPort = await freePort();
  const nginx = await startNginx(
    dir,
    "auth",
    nginxConfig(
      dir,
      1,
      `upstream backend { server 127.0.0.1:${backend.port}; keepalive 32; }
  server {
    listen 127.0.0.1:${nginxPort};
    location = /_auth {
      internal;
      proxy_pass_request_body off;
      proxy_set_header Content-Length "";
      proxy_set_header X-Original-URL $scheme://$http_host$request_uri;
      proxy_pass ${authUrl};
    }
    location / {
      auth_request /_auth;
      auth_request_set $authHeader0 $upstream_http_x_auth_request_user;
      proxy_set_header X-Auth-Request-User $authHeader0;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_pass http://backend;
    }
  }`,
    ),
  );
  console.log(
    `wrk -t1 -c16 -d${seconds}s, loopback, one Bulwark process, nginx 1 worker; load average ${loadavg()
      .map(n => n.toFixed(1))
      .join(" ")}`,
  );
  for (const [label, port, host] of [
    ["Bulwark, no auth", plane.httpPort, "open.bench"],
    ["Bulwark, auth-url", plane.httpPort, "auth.bench"],
    ["Bulwark, auth-url + auth-keepalive 32", plane.httpPort, "pooled.bench"],
    ["Bulwark, auth-url + auth-cache-key", plane.httpPort, "cached.bench"],
    ["nginx auth_request (no cache)", nginxPort, "auth.bench"],
  ] as const) {
    await wrk(port, host, 1); // warm-up
    console.log(`${label}: ${await wrk(port, host, seconds)}`);
  }
  await stopNginx(nginx);
  rmSync(dir, { recursive: true, force: true });
  await plane.close({ drainMs: 200 });
  servers.kill("SIGTERM");
}

void main();
