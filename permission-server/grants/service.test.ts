// The grant service's timing on its injected clock: what it stamps, when it backs off, when the
// breaker opens and when it comes back, all read from `deps.clock`. The clock is set years before
// the real one, so a stray Date.now() shows: a backoff that has not ended would have, a live claim
// would look expired, a retry timer would fire at once. Its dependencies are fakes of the
// interfaces it is given (the pod API, the pod cache, the breaker store, the ledger, the
// catalog, a scripted provider); the retry timer runs on node:test's mock timers.
import { afterEach, beforeEach, describe, it, mock } from "node:test";
import assert from "node:assert/strict";
import type { CoreV1Event, V1Pod } from "@kubernetes/client-node";
import {
  PERMISSION_CLAIM_ANNOTATION,
  PERMISSION_GRANT_ANNOTATION,
  PERMISSION_GROUP_ANNOTATION,
  PERMISSION_STATUS_ANNOTATION,
} from "../../core/names";
import type { LedgerSpec } from "../../core/permission/ledger";
import { waitUntil } from "../../test/harness/wait";
import type { Clock, ProviderHandle } from "./job";
import { GrantService, type GrantServiceDeps } from "./service";
import { JobSlots } from "./job-slots";
import { Metrics } from "../metrics";
import { ProviderBreaker } from "../providers/breaker";
import type { GrantState, Provider } from "../providers/types";

/** Years before the real clock: anything read from Date instead of the clock is far off. */
const T0 = Date.parse("2020-01-01T00:00:00.000Z");
const at = (ms: number): string => new Date(T0 + ms).toISOString();
const BACKOFF_MS = 10_000;
const POLL_MS = 2000;
const DEADLINE_MS = 60_000;

const NS = "shop";
const NAME = "web-1";
const UID = "uid-1";
const IP = "10.0.0.1";

/** Time that moves only when the test moves it; the service's sleeps wake when it passes them. */
class TestClock implements Clock {
  #now: number;
  readonly #sleepers = new Set<{ at: number; wake: () => void }>();

  constructor(start: number) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise(resolve => {
      if (signal.aborted) return resolve();
      const onAbort = (): void => {
        this.#sleepers.delete(sleeper);
        resolve();
      };
      const sleeper = {
        at: this.#now + ms,
        wake: () => {
          signal.removeEventListener("abort", onAbort);
          resolve();
        },
      };
      this.#sleepers.add(sleeper);
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  get sleeping(): number {
    return this.#sleepers.size;
  }

  advance(ms: number): void {
    this.#now += ms;
    for (const sleeper of [...this.#sleepers]) {
      if (sleeper.at > this.#now) continue;
      this.#sleepers.delete(sleeper);
      sleeper.wake();
    }
  }
}

/** The pod API as the service uses it: annotation merge patches with a resourceVersion precondition. */
class FakePodApi {
  readonly #pods = new Map<string, V1Pod>();
  #version = 1;
  readonly events: CoreV1Event[] = [];
  patches = 0;

  readonly core = {
    patchNamespacedPod: async (request: {
      name: string;
      namespace: string;
      body: { metadata: { annotations: Record<string, string | null>; resourceVersion?: string } };
    }): Promise<V1Pod> => {
      const pod = this.#pods.get(`${request.namespace}/${request.name}`);
      if (!pod) throw Object.assign(new Error("not found"), { code: 404 });
      const { annotations, resourceVersion } = request.body.metadata;
      if (resourceVersion !== undefined && resourceVersion !== pod.metadata?.resourceVersion) {
        throw Object.assign(new Error("the object has been modified"), { code: 409 });
      }
      const merged = { ...pod.metadata?.annotations };
      for (const [key, value] of Object.entries(annotations)) {
        if (value === null) delete merged[key];
        else merged[key] = value;
      }
      this.patches++;
      return this.#store({ ...pod, metadata: { ...pod.metadata, annotations: merged } });
    },
    readNamespacedPod: async (request: { name: string; namespace: string }): Promise<V1Pod> => {
      const pod = this.get(request.namespace, request.name);
      if (!pod) throw Object.assign(new Error("not found"), { code: 404 });
      return pod;
    },
    createNamespacedEvent: async (request: { body: CoreV1Event }): Promise<CoreV1Event> => {
      this.events.push(request.body);
      return request.body;
    },
  };

  #store(pod: V1Pod): V1Pod {
    const stored = structuredClone(pod);
    stored.metadata = { ...stored.metadata, resourceVersion: String(++this.#version) };
    this.#pods.set(`${stored.metadata.namespace}/${stored.metadata.name}`, stored);
    return structuredClone(stored);
  }

  add(annotations: Record<string, string> = {}): V1Pod {
    return this.#store({
      metadata: {
        namespace: NS,
        name: NAME,
        uid: UID,
        annotations: { [PERMISSION_GROUP_ANNOTATION]: "readers", ...annotations },
      },
      status: { podIP: IP },
    });
  }

  get(namespace = NS, name = NAME): V1Pod | undefined {
    const pod = this.#pods.get(`${namespace}/${name}`);
    return pod && structuredClone(pod);
  }

  annotation(key: string): string | undefined {
    return this.get()?.metadata?.annotations?.[key];
  }

  status(): Record<string, unknown> {
    return JSON.parse(this.annotation(PERMISSION_STATUS_ANNOTATION) ?? "{}") as Record<
      string,
      unknown
    >;
  }
}

type Entry = Awaited<ReturnType<GrantServiceDeps["store"]["read"]>>;

/** A provider answering from a list of answers (the last one repeats), counting its calls. */
function scripted(answers: GrantState[]): Provider & { calls: string[] } {
  const calls: string[] = [];
  const next = async (call: string): Promise<GrantState> => {
    calls.push(call);
    return answers[Math.min(calls.length - 1, answers.length - 1)] as GrantState;
  };
  return {
    name: "authz",
    calls,
    grant: () => next("grant"),
    poll: () => next("poll"),
    revoke: async () => {},
    close: async () => {},
  };
}

function world(answers: GrantState[], options: { claimOf?: Record<string, string> } = {}) {
  const clock = new TestClock(T0);
  const api = new FakePodApi();
  api.add(options.claimOf);
  const provider = scripted(answers);
  const entries = new Map<string, Entry>();
  const ledgers = new Map<string, LedgerSpec>();
  const warnings: string[] = [];
  const handle: ProviderHandle = {
    name: "authz",
    provider,
    breaker: new ProviderBreaker({ failures: 3, openMs: 30_000, now: () => clock.now() }),
    timeoutMs: 1000,
    slots: new JobSlots(4),
    schedule: call => call(),
  };
  const metrics = new Metrics();
  const deps = {
    kube: { core: api.core },
    settings: {
      replica: "replica-0",
      backoff: { durationMs: BACKOFF_MS, factor: 2, jitter: 0, steps: 10, capMs: 300_000 },
      breakerThreshold: 3,
      grantTimeoutMs: DEADLINE_MS,
      pollIntervalMs: POLL_MS,
      retryIntervalMs: 1000,
      retryMaxIntervalMs: 8000,
      claimTtlMs: 60_000,
      cmdb: undefined,
    },
    catalog: {
      group: async () => ({
        permissions: [
          {
            name: "orders",
            provider: "authz",
            type: "http" as const,
            params: { resource: "orders", action: "read" as const },
          },
        ],
        registerWithCmdb: false,
      }),
      provider: async () => handle,
      providerIfExists: async () => handle,
      close: async () => {},
    },
    store: {
      read: async (uid: string) => entries.get(uid) ?? { breaker: { failures: 0 } },
      update: async (uid: string, change: (entry: Entry) => Entry) => {
        const next = change(entries.get(uid) ?? { breaker: { failures: 0 } });
        entries.set(uid, next);
        return next;
      },
    },
    ledger: {
      update: async (
        pod: LedgerSpec["pod"] & { group: string },
        change: (spec: LedgerSpec) => LedgerSpec,
      ) => {
        const { group, ...identity } = pod;
        const next = change(ledgers.get(pod.uid) ?? { pod: identity, group, entries: [] });
        ledgers.set(pod.uid, next);
        return next;
      },
    },
    pods: {
      get: (namespace: string, name: string) => api.get(namespace, name),
      fresh: async (namespace: string, name: string) => api.get(namespace, name),
      put: () => {},
      onChange: () => () => {},
    },
    revoker: {
      revoke: async () => ({ revoked: [], kept: [], skipped: [], failed: [], ips: [] }),
    },
    log: {
      info: () => {},
      debug: () => {},
      error: () => {},
      warn: (message: string) => warnings.push(message),
    },
    metrics,
    clock,
    random: () => 0,
  } as unknown as GrantServiceDeps;
  const service = new GrantService(deps);
  /** ensure() on the pod as the API has it now, then the attempt (if one started) to its end. */
  const ensure = async (): Promise<void> => {
    await service.ensure(api.get() as V1Pod);
    await waitUntil("the grant attempt to end", () => !service.isRunning(UID));
  };
  return { clock, api, provider, entries, ledgers, warnings, metrics, service, ensure };
}

/** Lets every promise the fakes resolve run on (none of them waits on a timer). */
const settle = (): Promise<void> => new Promise(resolve => setImmediate(resolve));

const PENDING: GrantState = { state: "pending", jobId: "job-1" };
const GRANTED: GrantState = { state: "granted", jobId: "job-1" };
const DENIED: GrantState = { state: "denied", reason: "no such resource" };

describe("GrantService on its injected clock", () => {
  beforeEach(() => mock.timers.enable({ apis: ["setTimeout"] }));
  afterEach(() => mock.timers.reset());

  it("given a job granted at its first poll, stamps status, record and ledger with the clock's time and times the grant on it", async () => {
    const w = world([PENDING, GRANTED]);
    await w.service.ensure(w.api.get() as V1Pod);
    await waitUntil("the job to wait for its poll", () => w.clock.sleeping === 1);
    w.clock.advance(POLL_MS);
    await waitUntil("the grant attempt to end", () => !w.service.isRunning(UID));

    assert.deepEqual(w.provider.calls, ["grant", "poll"]);
    const status = w.api.status();
    assert.equal(status.phase, "granted");
    assert.equal(status.updatedAt, at(POLL_MS));
    const record = JSON.parse(w.api.annotation(PERMISSION_GRANT_ANNOTATION) ?? "{}") as {
      grantedAt?: string;
    };
    assert.equal(record.grantedAt, at(POLL_MS));
    assert.deepEqual(
      w.ledgers.get(UID)?.entries.map(e => [e.name, e.grantedAt]),
      [["orders", at(POLL_MS)]],
    );
    assert.equal(w.api.annotation(PERMISSION_CLAIM_ANNOTATION), undefined, "claim released");
    const histogram = await w.metrics.timeToGranted.get();
    const sum = histogram.values.find(v => v.metricName?.endsWith("_sum"))?.value;
    assert.equal(sum, POLL_MS / 1000, "from the first call to granted, on the clock");
    assert.deepEqual(
      w.api.events.map(e => e.reason),
      ["Granted"],
    );
    await w.service.stop();
  });

  it("given a denied grant, backs off for the configured backoff: no attempt before its end, one at it", async () => {
    const w = world([DENIED]);
    await w.ensure();
    assert.equal(w.provider.calls.length, 1);
    const failed = w.api.status();
    assert.equal(failed.phase, "backoff");
    assert.equal(failed.retryAt, at(BACKOFF_MS));
    assert.equal(failed.updatedAt, at(0));
    assert.match(
      String(failed.reason),
      /^attempt 1 failed \(1 of 3\): orders \(authz\): no such resource$/,
    );
    assert.equal(w.entries.get(UID)?.retry?.nextAttemptAt, at(BACKOFF_MS));
    assert.equal(w.entries.get(UID)?.retry?.lastFailureAt, at(0));

    w.clock.advance(BACKOFF_MS - 1);
    await w.ensure();
    assert.equal(w.provider.calls.length, 1, "still backing off: no attempt");
    assert.equal(w.api.status().rev, failed.rev, "the status already says so: not rewritten");

    w.clock.advance(1);
    await w.ensure();
    assert.equal(w.provider.calls.length, 2, "the backoff has ended: the next attempt runs");
    assert.equal(w.api.status().retryAt, at(BACKOFF_MS + 2 * BACKOFF_MS), "the backoff doubled");
    await w.service.stop();
  });

  it("given a failure, comes back by itself when the backoff ends, its timer set from the clock", async () => {
    const w = world([DENIED, GRANTED]);
    await w.ensure();
    assert.equal(w.provider.calls.length, 1);

    // The timer waits retryAt minus the clock's now, and 10 ms more.
    w.clock.advance(BACKOFF_MS);
    mock.timers.tick(BACKOFF_MS + 9);
    await settle();
    assert.equal(w.provider.calls.length, 1, "not before its time");

    mock.timers.tick(1);
    await waitUntil("the retry to grant", () => w.api.status().phase === "granted");
    assert.equal(w.provider.calls.length, 2);
    assert.equal(w.api.status().updatedAt, at(BACKOFF_MS));
    await w.service.stop();
  });

  it("given three failures, opens the breaker and says when its one probe runs; the probe runs then", async () => {
    const w = world([DENIED]);
    await w.ensure();
    w.clock.advance(BACKOFF_MS);
    await w.ensure();
    w.clock.advance(2 * BACKOFF_MS);
    await w.ensure();
    assert.equal(w.provider.calls.length, 3);
    const probeAt = 3 * BACKOFF_MS + 4 * BACKOFF_MS;
    const blocked = w.api.status();
    assert.equal(blocked.phase, "blocked");
    assert.equal(blocked.retryAt, at(probeAt));
    assert.equal(
      blocked.reason,
      `breaker open after 3 failed attempts (last: orders (authz): no such resource); one more try at ${at(probeAt)}, or now with: bulwark permission reset ${NAME} -n ${NS}`,
    );
    assert.equal(w.entries.get(UID)?.breaker.openedAt, at(3 * BACKOFF_MS));
    assert.deepEqual(
      w.api.events.map(e => e.reason),
      ["GrantFailed", "GrantFailed", "GrantBlocked"],
    );

    w.clock.advance(4 * BACKOFF_MS - 1);
    await w.ensure();
    assert.equal(w.provider.calls.length, 3, "blocked until the probe's time");
    w.clock.advance(1);
    await w.ensure();
    assert.equal(w.provider.calls.length, 4, "the one probe through the open breaker");
    await w.service.stop();
  });

  it("given a backoff recorded elsewhere and no status yet, writes the backoff status once, stamped by the clock", async () => {
    const w = world([GRANTED]);
    w.entries.set(UID, {
      breaker: { failures: 1, lastError: "timeout" },
      retry: {
        backoff: { durationMs: 2 * BACKOFF_MS, factor: 2, jitter: 0, steps: 9, capMs: 300_000 },
        lastFailureAt: at(0),
        nextAttemptAt: at(BACKOFF_MS),
      },
    });
    w.clock.advance(1000);
    await w.ensure();
    const status = w.api.status();
    assert.equal(status.phase, "backoff");
    assert.equal(status.retryAt, at(BACKOFF_MS));
    assert.equal(status.updatedAt, at(1000));
    assert.equal(status.reason, "backing off after 1 failed attempt(s) (last: timeout)");
    const patches = w.api.patches;
    await w.ensure();
    assert.equal(w.api.patches, patches, "said once");
    assert.deepEqual(w.provider.calls, []);
    await w.service.stop();
  });

  it("given another replica's claim that the clock says is live, leaves the pod alone", async () => {
    const claim = JSON.stringify({ holder: "replica-1", until: at(30_000) });
    const w = world([GRANTED], { claimOf: { [PERMISSION_CLAIM_ANNOTATION]: claim } });
    await w.ensure();
    assert.deepEqual(w.provider.calls, []);
    assert.equal(w.api.annotation(PERMISSION_CLAIM_ANNOTATION), claim);
    assert.equal(w.api.patches, 0);
    await w.service.stop();
  });

  it("given a job still pending at the grant timeout by the clock, fails the attempt as timed out", async () => {
    const w = world([PENDING]);
    await w.service.ensure(w.api.get() as V1Pod);
    for (let waited = 0; waited < DEADLINE_MS; waited += POLL_MS) {
      await waitUntil("the job to wait for its next poll", () => w.clock.sleeping === 1);
      w.clock.advance(POLL_MS);
    }
    await waitUntil("the grant attempt to end", () => !w.service.isRunning(UID));
    assert.equal(
      w.provider.calls.length,
      DEADLINE_MS / POLL_MS,
      "a grant, then a poll after each wait",
    );
    const status = w.api.status();
    assert.equal(status.phase, "backoff");
    assert.match(String(status.reason), /not granted within 60000ms: still pending \(job job-1\)/);
    assert.equal(status.retryAt, at(DEADLINE_MS + BACKOFF_MS));
    await w.service.stop();
  });

  it("given a stop, cancels the retry timer: nothing runs when the backoff ends", async () => {
    const w = world([DENIED, GRANTED]);
    await w.ensure();
    await w.service.stop();
    w.clock.advance(BACKOFF_MS);
    mock.timers.tick(BACKOFF_MS + 10);
    await settle();
    assert.equal(w.provider.calls.length, 1);
    assert.equal(w.api.status().phase, "backoff");
  });
});
