// The init client's loop: one authenticated call that asks for the pod's grants, then long-polls
// the status until it is final. Transient trouble (the server unreachable or restarting, 5xx,
// 429, the pod's IP not posted yet) is retried here, with jittered exponential backoff, so that
// kubelet's restart backoff is never the retry loop. Final: granted (exit 0), or refused with one
// line why (the server refuses the caller, or the pod's breaker is open).
import { readFileSync } from "node:fs";
import { backoffWait, UNBOUNDED_STEPS } from "../core/backoff";
import { trustingFetch, untrustedCertificateCode, type Fetch } from "../kube/trusting-fetch";
import type { InitSettings } from "./settings";

export interface InitIo {
  /** Progress lines (stdout). */
  say(line: string): void;
  sleep(ms: number): Promise<void>;
  random(): number;
  fetch: Fetch;
  readToken(path: string): string;
}

/** The process's I/O; `ca`, when set, is the only CA the server's certificate may chain to. */
export function realIo(ca: string | undefined): InitIo {
  return {
    say: line => void process.stdout.write(`${line}\n`),
    sleep: ms => new Promise(resolve => setTimeout(resolve, ms)),
    random: Math.random,
    fetch: trustingFetch(ca),
    readToken: path => readFileSync(path, "utf8").trim(),
  };
}

export type InitResult = { granted: true } | { granted: false; reason: string };

interface Answer {
  verdict?: "granted" | "refused" | "wait";
  reason?: string;
  error?: string;
  status?: { rev?: number; phase?: string } | null;
}

type CallOutcome =
  | { kind: "answer"; answer: Answer }
  | { kind: "refused"; reason: string }
  | { kind: "retry"; reason: string };

/** 400/401/403/404/412: the server will not grant this caller; anything else may pass. */
const DEFINITIVE = new Set([400, 401, 403, 404, 412]);

async function call(
  settings: InitSettings,
  io: InitIo,
  request: { method: string; path: string; body?: unknown; timeoutMs: number },
): Promise<CallOutcome> {
  let response: Response;
  try {
    // Re-read every time: kubelet rotates projected tokens.
    const token = io.readToken(settings.tokenPath);
    response = await io.fetch(`${settings.server}${request.path}`, {
      method: request.method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(request.body ? { "content-type": "application/json" } : {}),
      },
      body: request.body ? JSON.stringify(request.body) : undefined,
      signal: AbortSignal.timeout(request.timeoutMs),
    });
  } catch (error) {
    // Never retried: the token must not go to a server we cannot verify, and waiting will not
    // change the certificate or the CA this container was given (kubelet's restart will).
    const untrusted = untrustedCertificateCode(error);
    if (untrusted) {
      return {
        kind: "refused",
        reason: `the permission server's certificate is not trusted (${untrusted})`,
      };
    }
    return { kind: "retry", reason: error instanceof Error ? error.message : String(error) };
  }
  const text = await response.text().catch(() => "");
  let answer: Answer = {};
  try {
    answer = JSON.parse(text) as Answer;
  } catch {
    answer = { error: text.slice(0, 200) };
  }
  if (response.ok) return { kind: "answer", answer };
  const reason = `${response.status} ${answer.error ?? response.statusText}`;
  return DEFINITIVE.has(response.status) ? { kind: "refused", reason } : { kind: "retry", reason };
}

function finalResult(answer: Answer): InitResult | undefined {
  if (answer.verdict === "granted") return { granted: true };
  if (answer.verdict === "refused") return { granted: false, reason: answer.reason ?? "refused" };
  return undefined;
}

function request(settings: InitSettings, rev: number | undefined) {
  const { pod } = settings;
  if (rev === undefined) {
    return {
      method: "POST",
      path: "/v1/grants",
      body: { namespace: pod.namespace, pod: pod.name, uid: pod.uid, ip: pod.ip },
      timeoutMs: settings.requestTimeoutMs,
    };
  }
  const query = `uid=${encodeURIComponent(pod.uid)}&rev=${rev}&wait=${settings.waitMs / 1000}`;
  return {
    method: "GET",
    path: `/v1/grants/${encodeURIComponent(pod.namespace)}/${encodeURIComponent(pod.name)}?${query}`,
    timeoutMs: settings.waitMs + settings.requestTimeoutMs,
  };
}

/** Runs until the pod is granted or refused. */
export async function runInit(settings: InitSettings, io: InitIo): Promise<InitResult> {
  /** undefined until the first call was answered; then the status revision last seen. */
  let rev: number | undefined;
  let failures = 0;
  let lastLine = "";
  const say = (line: string): void => {
    if (line !== lastLine) io.say((lastLine = line));
  };
  for (;;) {
    const outcome = await call(settings, io, request(settings, rev));
    if (outcome.kind === "refused") return { granted: false, reason: `refused: ${outcome.reason}` };
    if (outcome.kind === "retry") {
      say(`retrying: ${outcome.reason}`);
      await io.sleep(retryDelay(++failures, settings.retryMaxMs, io.random));
      continue;
    }
    failures = 0;
    const { answer } = outcome;
    const final = finalResult(answer);
    if (final) return final;
    rev = answer.status?.rev ?? rev ?? -1;
    say(`waiting: ${answer.reason ?? answer.status?.phase ?? "pending"}`);
    // A server that does not hold the poll (wait=0): don't spin.
    if (settings.waitMs === 0) await io.sleep(1000);
  }
}

/**
 * The wait before retry number `failures`: Kubernetes' jittered backoff, [d, 2d) with
 * d = 250 ms × 2^(n−1). `maxMs` (BULWARK_INIT_RETRY_MAX_MS) caps the wait itself, not only the
 * base as wait.Backoff's Cap does, because the setting promises the longest pause a pod's start
 * can take between two calls.
 */
export function retryDelay(failures: number, maxMs: number, random: () => number): number {
  const backoff = { durationMs: 250, factor: 2, jitter: 1, steps: UNBOUNDED_STEPS, capMs: maxMs };
  return Math.min(maxMs, backoffWait(backoff, failures, random));
}
