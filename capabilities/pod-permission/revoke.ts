// Revocation (watcher side): for each of Bulwark's pods that is being deleted, ask the permission
// server to revoke what its ledger holds for the pod's UID, then remove only our finalizer. The
// process's one watch of every pod (clusterPods) delivers Bulwark's (isPermissionPod); its first
// list finds those that began terminating while the watcher was down. A periodic sweep re-reads
// the terminating pods the watch has shown, as client-go's resync replays its informer's store,
// not a list of every managed pod whole each minute (about 80 MB of JSON at 10 000 pods). Failed
// revocations retry with Kubernetes' backoff until the deadline, after which the finalizer goes
// with a Warning.
import { readFileSync } from "node:fs";
import { Log } from "pepr";
import { PERMISSION_MANAGED_LABEL, POD_PERMISSION_FINALIZER } from "../../core/names";
import { finalizerRemovalPatch } from "../../core/json-patch";
import { revocationPlan, type PermissionPod, type RevocationPlan } from "../../core/permission";
import { stepBackoff, type Backoff } from "../../core/backoff";
import { recordEvent } from "../pepr/events";
import { trustingFetch } from "../../kube/trusting-fetch";
import type { PermissionSettings } from "./settings";
import { isNotFound } from "../../kube/api-errors";
import { PODS, resourcePath } from "../../kube/api-paths";
import { keptAliveApi } from "../../kube/kept-alive-api";
import { objectKey } from "../../core/object-key";

const COMPONENT = "pod-permission";
const RETRY: Backoff = { durationMs: 1000, factor: 2, jitter: 1, steps: 8, capMs: 60_000 };

type Pod = PermissionPod & { apiVersion?: string; kind?: string };

/**
 * Bulwark's pods: every pod admission injected carries the label (with any value: one changed by
 * an administrator, whom the metadata policy lets, still holds our grants), and a pod that holds
 * our finalizer is ours until it is released, whatever its labels say.
 */
export function isPermissionPod(pod: Pod): boolean {
  const { labels, finalizers } = pod.metadata ?? {};
  return (
    (labels !== undefined && PERMISSION_MANAGED_LABEL in labels) ||
    (finalizers?.includes(POD_PERMISSION_FINALIZER) ?? false)
  );
}

export class Revoker {
  readonly #settings: PermissionSettings;
  /** Per pod UID: the next retry's timer and backoff state. */
  readonly #retries = new Map<string, { timer: NodeJS.Timeout; backoff: Backoff }>();
  readonly #inFlight = new Set<string>();
  /** namespace/name → a terminating pod that held our finalizer when last seen: what a sweep re-reads. */
  readonly #terminating = new Map<string, Pod>();

  constructor(settings: PermissionSettings) {
    this.#settings = settings;
  }

  start(): void {
    setInterval(() => void this.sweep(), this.#settings.sweepMs).unref();
  }

  /**
   * A pod event from the list-watch (a removal may name the pod only): a terminating pod holding
   * our finalizer is remembered for the sweep and handled; anything else is forgotten.
   */
  async observe(pod: Pod, deleted: boolean): Promise<void> {
    const key = objectKey(pod);
    const settled = deleted || this.#plan(pod).action === "none";
    if (settled) {
      this.#terminating.delete(key);
      return;
    }
    const { namespace, name, uid } = pod.metadata ?? {};
    this.#terminating.set(key, { metadata: { namespace, name, uid } });
    await this.handle(pod);
  }

  /** Each remembered terminating pod, read again and handled (level-triggered, like an event). */
  async sweep(): Promise<void> {
    await Promise.all([...this.#terminating.values()].map(pod => this.#retryNow(pod)));
  }

  /** Level-triggered: safe to call for any pod, any number of times. */
  async handle(pod: Pod): Promise<void> {
    const uid = pod.metadata?.uid ?? "";
    if (this.#inFlight.has(uid)) return;
    this.#inFlight.add(uid);
    try {
      await this.#act(pod);
    } finally {
      this.#inFlight.delete(uid);
    }
  }

  #plan(pod: Pod): RevocationPlan {
    return revocationPlan(pod, new Date(), this.#settings.revokeDeadlineMs);
  }

  async #act(pod: Pod): Promise<void> {
    const plan = this.#plan(pod);
    const log = { ns: pod.metadata?.namespace, name: pod.metadata?.name, uid: pod.metadata?.uid };
    switch (plan.action) {
      case "none":
        return;
      case "release":
        await this.#release(pod, {
          type: "Normal",
          reason: "Released",
          message: `finalizer removed: ${plan.reason}`,
        });
        return;
      case "force-release":
        Log.warn({ ...log, reason: plan.reason }, "releasing without revocation");
        await this.#release(pod, {
          type: "Warning",
          reason: "RevokeAbandoned",
          message: `finalizer removed without revoking: ${plan.reason}`,
        });
        return;
      case "revoke":
        await this.#revoke(pod);
    }
  }

  async #revoke(pod: Pod): Promise<void> {
    const uid = pod.metadata?.uid ?? "";
    let outcome: string;
    try {
      outcome = await this.#callRevoke(pod);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      Log.warn(
        { ns: pod.metadata?.namespace, name: pod.metadata?.name, uid, err: message },
        "revocation failed; retrying",
      );
      await recordEvent(pod, { type: "Warning", reason: "RevokeFailed", message }, COMPONENT);
      this.#retryLater(pod);
      return;
    }
    this.#clearRetry(uid);
    await this.#release(pod, { type: "Normal", reason: "Revoked", message: outcome });
  }

  /**
   * Names the pod only: the server revokes what its ledger holds for the UID, at the IPs it
   * granted (never the pod's current IP, which may be reused). Answers what was revoked.
   */
  async #callRevoke(pod: Pod): Promise<string> {
    // The same CA the init containers are given: the watcher's token goes only to our server.
    const fetchTrusted = trustingFetch(await this.#settings.ca.current());
    const url = new URL("/v1/revoke", this.#settings.inject.serverUrl).toString();
    const response = await fetchTrusted(url, {
      method: "POST",
      headers: { "content-type": "application/json", ...this.#authorization() },
      body: JSON.stringify({
        namespace: pod.metadata?.namespace,
        pod: pod.metadata?.name,
        uid: pod.metadata?.uid,
      }),
      signal: AbortSignal.timeout(this.#settings.revokeTimeoutMs),
    });
    const text = await response.text();
    // Nothing in the ledger (404) is as good as revoked: revocation is idempotent.
    if (response.status === 404) return "nothing was granted to this pod";
    if (!response.ok) {
      throw new Error(`permission server answered ${response.status} ${text.slice(0, 200)}`);
    }
    return revokedMessage(text);
  }

  /** Read on every call: kubelet rotates the projected token. No token, no header (and a 401). */
  #authorization(): Record<string, string> {
    try {
      const token = readFileSync(this.#settings.revokeTokenPath, "utf8").trim();
      return token ? { authorization: `Bearer ${token}` } : {};
    } catch {
      return {};
    }
  }

  #retryLater(pod: Pod): void {
    const uid = pod.metadata?.uid ?? "";
    const previous = this.#retries.get(uid);
    if (previous) clearTimeout(previous.timer);
    const { waitMs, next } = stepBackoff(previous?.backoff ?? RETRY, Math.random);
    const timer = setTimeout(() => void this.#retryNow(pod), waitMs);
    timer.unref();
    this.#retries.set(uid, { timer, backoff: next });
  }

  async #retryNow(pod: Pod): Promise<void> {
    try {
      const current = await keptAliveApi().getIfExists<Pod>(podPath(pod));
      if (current === undefined || current.metadata?.uid !== pod.metadata?.uid) {
        // Gone, or a new pod under the name: nothing of the old one's is left to do here.
        this.#clearRetry(pod.metadata?.uid ?? "");
        this.#terminating.delete(objectKey(pod));
      } else await this.handle(current);
    } catch (error) {
      const { namespace, name, uid } = pod.metadata ?? {};
      Log.warn({ ns: namespace, name, uid, err: String(error) }, "pod re-read failed; retrying");
      this.#retryLater(pod);
    }
  }

  #clearRetry(uid: string): void {
    const retry = this.#retries.get(uid);
    if (retry) clearTimeout(retry.timer);
    this.#retries.delete(uid);
  }

  /** Removes only our finalizer, guarded by a JSON Patch `test`; never touches the spec. */
  async #release(pod: Pod, note: Parameters<typeof recordEvent>[1]): Promise<void> {
    const ops = finalizerRemovalPatch(pod.metadata?.finalizers, POD_PERMISSION_FINALIZER);
    if (!ops) return;
    const namespace = pod.metadata?.namespace ?? "";
    const name = pod.metadata?.name ?? "";
    try {
      await keptAliveApi().jsonPatch(podPath(pod), ops);
    } catch (error) {
      // The finalizer list moved under us (or the pod is gone): act again on a fresh read.
      if (isNotFound(error)) return;
      Log.info(
        { ns: namespace, name, err: String(error) },
        "finalizer patch conflicted; re-reading",
      );
      this.#retryLater(pod);
      return;
    }
    this.#clearRetry(pod.metadata?.uid ?? "");
    Log.info({ ns: namespace, name, reason: note.reason }, "finalizer removed");
    await recordEvent({ ...pod, apiVersion: "v1", kind: "Pod" }, note, COMPONENT);
  }
}

function podPath(pod: Pod): string {
  return resourcePath(PODS, { namespace: pod.metadata?.namespace, name: pod.metadata?.name ?? "" });
}

/** The Event text for the server's answer: what it revoked and kept, at which IPs. */
function revokedMessage(text: string): string {
  try {
    const answer = JSON.parse(text) as { revoked?: unknown; kept?: unknown; ips?: unknown };
    const list = (value: unknown): string[] =>
      Array.isArray(value) ? value.map(v => (typeof v === "string" ? v : String(v?.name))) : [];
    const revoked = list(answer.revoked);
    const kept = list(answer.kept);
    const ips = list(answer.ips);
    const keptText = kept.length > 0 ? `; kept ${kept.join(", ")} (held by another pod)` : "";
    return `revoked ${revoked.join(", ") || "nothing"} for ${ips.join(", ") || "no IP"}${keptText}`;
  } catch {
    return "revoked";
  }
}
