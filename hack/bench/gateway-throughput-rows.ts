// The rows of gateway-throughput.ts: what the gateway serves in each, and nginx configured to do
// the same work, so every row compares like with like.
import { createHash } from "node:crypto";
import type { V1EndpointSlice, V1Ingress } from "@kubernetes/client-node";
import type { DataPlane, startDataPlane } from "../../gateway/data-plane";
import type { ListenMode } from "../../gateway/listen-mode";
import type { ObserveOptions } from "../../gateway/observability/observer";

export const HOST = "bench.test";
export const ORIGIN = "https://app.bench.test";
const OTHER_ORIGIN = "https://other.bench.test";
const NGINX_PREFIX = "nginx.ingress.kubernetes.io/";

/** What the gateway serves: which Ingresses, and which observability is on. */
type Work = "plain" | "policy" | "access";

export interface Row {
  name: string;
  work: Work;
  observe: ObserveOptions;
  /** The JSON access log on, for both (to a file each, buffered). */
  log: boolean;
  /** What nginx does differently, when it cannot do the same (it has no per-host metrics). */
  note?: string;
}

export const ROWS: readonly Row[] = [
  { name: "plain route", work: "plain", observe: { metrics: false, accessLog: false }, log: false },
  {
    name: "plain + metrics",
    work: "plain",
    observe: { metrics: true, accessLog: false },
    log: false,
    note: "nginx keeps no per-host metrics: its peer is the plain route",
  },
  {
    // The issue's "metrics + access log" row: what most installs run on a plain route.
    name: "plain + metrics + log",
    work: "plain",
    observe: { metrics: true, accessLog: true },
    log: true,
  },
  {
    name: "policy + metrics",
    work: "policy",
    observe: { metrics: true, accessLog: false },
    log: false,
  },
  {
    name: "policy + metrics + log",
    work: "policy",
    observe: { metrics: true, accessLog: true },
    log: true,
  },
  {
    name: "allowlist + basic auth + rate limit + metrics",
    work: "access",
    observe: { metrics: true, accessLog: false },
    log: false,
  },
];

/** The traffic policy of the "policy" rows: CORS on the main ingress, three canaries. */
const POLICY: { main: Record<string, string>; canaries: Record<string, string>[] } = {
  main: { "enable-cors": "true", "cors-allow-origin": `${ORIGIN}, ${OTHER_ORIGIN}` },
  canaries: [
    { "canary-by-header": "X-Canary" },
    { "canary-by-cookie": "canary" },
    { "canary-by-query": "canary" },
  ],
};

/**
 * The "access" row: loopback allowed (the client is in it, so every network is checked), basic
 * auth with one user, and a rate limit far above what the run sends, so every request is
 * counted and none refused. The user's hash is {SHA}: nginx checks the password on every
 * request (no cache), so a costly hash would measure the hash, not the proxy.
 */
const ACCESS = {
  "allowlist-source-range": "10.0.0.0/8, 192.168.0.0/16, 127.0.0.0/8",
  "limit-rps": "1000000",
  "auth-type": "basic",
  "auth-secret": "bench-users",
  "auth-realm": "bench",
};

const USER = "bench";
const PASSWORD = "bench-password";
/** The htpasswd line both check against. */
export const HTPASSWD = `${USER}:{SHA}${createHash("sha1").update(PASSWORD).digest("base64")}\n`;
/** What every request of the run sends (the other rows forward it as any header). */
export const AUTHORIZATION = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString("base64")}`;

function prefixed(annotations: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(annotations).map(([k, v]) => [NGINX_PREFIX + k, v]));
}

function benchIngress(name: string, annotations: Record<string, string>): V1Ingress {
  return {
    metadata: {
      namespace: "bench",
      name,
      creationTimestamp: new Date(0),
      annotations: prefixed(annotations),
    },
    spec: {
      rules: [
        {
          host: HOST,
          http: {
            paths: [
              {
                path: "/",
                pathType: "Prefix",
                backend: { service: { name: "web", port: { number: 80 } } },
              },
            ],
          },
        },
      ],
    },
  };
}

function ingressesOf(work: Work): V1Ingress[] {
  if (work === "plain") return [benchIngress("bench", {})];
  if (work === "access") return [benchIngress("bench", ACCESS)];
  return [
    benchIngress("bench", POLICY.main),
    ...POLICY.canaries.map((rule, i) => benchIngress(`canary-${i}`, { canary: "true", ...rule })),
  ];
}

export function benchView(backendPort: number, work: Work) {
  const slice: V1EndpointSlice = {
    metadata: {
      namespace: "bench",
      name: "web-1",
      labels: { "kubernetes.io/service-name": "web" },
    },
    addressType: "IPv4",
    ports: [{ port: backendPort, protocol: "TCP" }],
    endpoints: [{ addresses: ["127.0.0.1"], conditions: { ready: true } }],
  };
  const authSecrets = [
    {
      namespace: "bench",
      name: "bench-users",
      data: { auth: Buffer.from(HTPASSWD).toString("base64") },
    },
  ];
  return {
    version: 1,
    ingresses: ingressesOf(work),
    endpointSlices: [slice],
    tlsPairs: [],
    authSecrets,
  };
}

// ingress-nginx's proxy headers, as its template sets them on every location.
export const PROXY_HEADERS = `proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_set_header X-Request-ID $request_id;
      proxy_set_header X-Real-IP $remote_addr;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_set_header X-Forwarded-Host $host;
      proxy_set_header X-Forwarded-Port $server_port;`;

// The canary choice as ingress-nginx's balancer makes it (header, then cookie, then query, each
// "always" to the canary), as maps; and CORS as its template adds it for an allowed Origin.
const POLICY_HTTP = `map $http_x_canary $by_header { always canary-0; default ""; }
  map $cookie_canary $by_cookie { always canary-1; default ""; }
  map $arg_canary $by_query { always canary-2; default ""; }
  map "$by_header:$by_cookie:$by_query" $backend {
    "~^(?<h>[^:]+):" $h;
    "~^:(?<c>[^:]+):" $c;
    "~^::(?<q>.+)$" $q;
    default web;
  }
  map $http_origin $cors_origin {
    "~^(https://app\\.bench\\.test|https://other\\.bench\\.test)$" $http_origin;
    default "";
  }
  map $cors_origin $cors_credentials { "" ""; default true; }
  map $cors_origin $cors_vary { "" ""; default Origin; }`;

const POLICY_LOCATION = `proxy_pass http://$backend;
      add_header Access-Control-Allow-Origin $cors_origin;
      add_header Access-Control-Allow-Credentials $cors_credentials;
      add_header Vary $cors_vary;`;

// The gateway's access log fields, as nginx variables.
const LOG_FORMAT = `log_format bench escape=json '{"level":30,"time":$msec,"pid":$pid,"msg":"request",'
    '"component":"nginx","log":"access","remote_addr":"$remote_addr","request_id":"$request_id",'
    '"host":"$host","rule_host":"$server_name","method":"$request_method","path":"$request_uri",'
    '"protocol":"$server_protocol","scheme":"$scheme","status":$status,'
    '"user_agent":"$http_user_agent","ingress":"bench/bench","service":"bench/web",'
    '"variant":"main","upstream_addr":"$upstream_addr","upstream_status":"$upstream_status",'
    '"upstream_response_time":"$upstream_response_time","decision":"",'
    '"request_bytes":$request_length,"response_bytes":$bytes_sent,'
    '"duration_ms":$request_time}';`;

const ACCESS_HTTP = `limit_req_zone $binary_remote_addr zone=bench:10m rate=1000000r/s;`;
const ACCESS_LOCATION = `allow 10.0.0.0/8; allow 192.168.0.0/16; allow 127.0.0.0/8; deny all;
      auth_basic "bench";
      auth_basic_user_file HTPASSWD_FILE;
      limit_req zone=bench burst=5000000 nodelay;
      limit_req_status 503;
      proxy_pass http://web;`;

/** The http block of the nginx that does the row's work, listening on `port`. */
export function peerConfig(
  row: Row,
  port: number,
  backendPort: number,
  files: { log: string; htpasswd: string },
): string {
  const logPath = files.log;
  const upstreams = ["web", "canary-0", "canary-1", "canary-2"]
    .map(
      name =>
        `upstream ${name} { server 127.0.0.1:${backendPort}; keepalive 320; keepalive_requests 1000000; }`,
    )
    .join("\n  ");
  const http = row.work === "policy" ? POLICY_HTTP : row.work === "access" ? ACCESS_HTTP : "";
  const location =
    row.work === "policy"
      ? POLICY_LOCATION
      : row.work === "access"
        ? ACCESS_LOCATION.replace("HTPASSWD_FILE", files.htpasswd)
        : "proxy_pass http://web;";
  // The gateway writes its batch every 50 ms; nginx's buffer is flushed as often.
  const log = row.log ? `access_log ${logPath} bench buffer=64k flush=50ms;` : "";
  return `${upstreams}
  ${http}
  ${row.log ? LOG_FORMAT : ""}
  server {
    listen 127.0.0.1:${port};
    server_name ${HOST};
    keepalive_requests 1000000;
    ${log}
    location / {
      ${PROXY_HEADERS}
      ${location}
    }
  }`;
}

/** Where and how a row's gateway serves. */
export interface RowServing {
  row: Row;
  port: number;
  backendPort: number;
  /** The access log's file, for a row with the log on. */
  logPath: string;
  workers: number;
  listenMode: ListenMode;
}

/** `start`'s data plane (this checkout's or another's) serving the row's view; closed on failure. */
export async function serveRow(
  start: typeof startDataPlane,
  serving: RowServing,
): Promise<DataPlane> {
  const { row } = serving;
  const plane = await start({
    httpPort: serving.port,
    host: "127.0.0.1",
    workers: serving.workers,
    listenMode: serving.listenMode,
    defaultCertificates: [],
    observe: row.log ? { ...row.observe, accessLogPath: serving.logPath } : row.observe,
  });
  try {
    const applied = await plane.apply(benchView(serving.backendPort, row.work));
    if (applied.problems.length > 0) throw new Error(applied.problems.join("\n"));
  } catch (error) {
    await plane.close({ drainMs: 500 });
    throw error;
  }
  return plane;
}

/** A serving data plane's processes: this one first (the primary), then its workers. */
export function planePids(plane: DataPlane): number[] {
  return [...new Set([process.pid, ...plane.status().workers.map(w => w.pid)])];
}
