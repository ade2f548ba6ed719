// A pod this replica holds the claim on (core/permission/claim.ts): every write to its annotations carries the
// resourceVersion last seen and renews the claim. A 409 Conflict (kubelet and controllers write
// pods too) means: re-read, and if the claim is still ours write again, else the claim is lost
// (another replica took over after it expired) and the attempt stops. Writes are coalesced: the
// latest annotations win, one write in flight at a time.
import type { V1Pod } from "@kubernetes/client-node";
import { PERMISSION_CLAIM_ANNOTATION } from "../../core/names";
import { mayClaim, newClaim, serializeClaim } from "../../core/permission/claim";
import { isConflict, isNotFound } from "../../kube/api-errors";
import { patchPodAnnotations, type Kube } from "../kube";
import type { PodCache } from "./cache";

export type Annotations = Record<string, string | null>;

export interface ClaimContext {
  kube: Kube;
  pods: PodCache;
  holder: string;
  ttlMs: number;
}

const MAX_CONFLICTS = 10;

export class ClaimLostError extends Error {
  override name = "ClaimLostError";
}

export class ClaimedPod {
  /** Claims whose renew timer runs, in this process: 0 once every attempt has ended. */
  static #renewing = 0;
  static get renewing(): number {
    return ClaimedPod.#renewing;
  }

  readonly namespace: string;
  readonly name: string;
  #resourceVersion: string | undefined;
  #pending: Annotations = {};
  #flushing: Promise<void> | undefined;
  #lost = false;
  #renew: NodeJS.Timeout | undefined;

  private constructor(
    private readonly context: ClaimContext,
    pod: V1Pod,
    private readonly onLost: () => void,
  ) {
    this.namespace = pod.metadata?.namespace ?? "";
    this.name = pod.metadata?.name ?? "";
    this.#resourceVersion = pod.metadata?.resourceVersion;
    // Renew well before the TTL runs out, even when there is no progress to report.
    this.#renew = setInterval(() => void this.update({}).catch(() => {}), context.ttlMs / 3);
    this.#renew.unref();
    ClaimedPod.#renewing++;
  }

  /**
   * Takes the claim with a first write of `annotations`; undefined when another replica holds
   * it (or wins the race), or the pod is gone.
   */
  static async acquire(
    context: ClaimContext,
    pod: V1Pod,
    annotations: Annotations,
    onLost: () => void,
  ): Promise<ClaimedPod | undefined> {
    let current: V1Pod | undefined = pod;
    for (let tries = 0; current && tries < MAX_CONFLICTS; tries++) {
      const claim = current.metadata?.annotations?.[PERMISSION_CLAIM_ANNOTATION];
      if (!mayClaim(claim, context.holder, new Date())) return undefined;
      const claimed = new ClaimedPod(context, current, onLost);
      try {
        await claimed.#write(annotations);
        return claimed;
      } catch (error) {
        claimed.stop();
        if (!isConflict(error)) throw error;
        current = await context.pods.fresh(claimed.namespace, claimed.name);
      }
    }
    return undefined;
  }

  get lost(): boolean {
    return this.#lost;
  }

  /** Writes `annotations` (with the claim renewed) soon; resolves when they are written. */
  update(annotations: Annotations): Promise<void> {
    Object.assign(this.#pending, annotations);
    this.#flushing ??= this.#flush().finally(() => (this.#flushing = undefined));
    return this.#flushing;
  }

  /** The last write: `annotations` and the claim removed. */
  async release(annotations: Annotations): Promise<void> {
    this.stop();
    await this.#flushing?.catch(() => {});
    if (this.#lost) throw new ClaimLostError(`lost the claim on ${this.namespace}/${this.name}`);
    await this.#write({ ...annotations, [PERMISSION_CLAIM_ANNOTATION]: null });
  }

  /** Stops renewing (idempotent): every end of an attempt calls it, whatever else failed. */
  stop(): void {
    if (this.#renew === undefined) return;
    clearInterval(this.#renew);
    this.#renew = undefined;
    ClaimedPod.#renewing--;
  }

  async #flush(): Promise<void> {
    do {
      const batch = this.#pending;
      this.#pending = {};
      await this.#writeRetrying(batch);
    } while (Object.keys(this.#pending).length > 0);
  }

  async #writeRetrying(annotations: Annotations): Promise<void> {
    for (let tries = 0; ; tries++) {
      if (this.#lost) throw new ClaimLostError(`lost the claim on ${this.namespace}/${this.name}`);
      try {
        await this.#write(annotations);
        return;
      } catch (error) {
        if (isNotFound(error)) return this.#lose();
        if (!isConflict(error) || tries >= MAX_CONFLICTS) throw error;
        await this.#refresh();
      }
    }
  }

  /** After a conflict: the fresh resourceVersion if the claim is still ours, else the claim is lost. */
  async #refresh(): Promise<void> {
    const fresh = await this.context.pods.fresh(this.namespace, this.name);
    const claim = fresh?.metadata?.annotations?.[PERMISSION_CLAIM_ANNOTATION];
    if (!fresh || !mayClaim(claim, this.context.holder, new Date())) this.#lose();
    this.#resourceVersion = fresh.metadata?.resourceVersion;
  }

  #lose(): never {
    this.#lost = true;
    this.stop();
    this.onLost();
    throw new ClaimLostError(`lost the claim on ${this.namespace}/${this.name}`);
  }

  async #write(annotations: Annotations): Promise<void> {
    const { holder, ttlMs } = this.context;
    const claim =
      annotations[PERMISSION_CLAIM_ANNOTATION] === null
        ? null
        : serializeClaim(newClaim(holder, new Date(), ttlMs));
    const pod = await patchPodAnnotations(
      this.context.kube,
      { namespace: this.namespace, name: this.name, resourceVersion: this.#resourceVersion },
      { ...annotations, [PERMISSION_CLAIM_ANNOTATION]: claim },
    );
    this.#resourceVersion = pod.metadata?.resourceVersion;
    this.context.pods.put(pod);
  }
}
