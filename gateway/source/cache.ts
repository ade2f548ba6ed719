// The gateway's copy of the objects it watches, one map per kind keyed by namespace/name. Every
// real change is reported once to the listener (a relist that brings nothing new reports
// nothing), so the guard can update incrementally. Server bookkeeping that never changes
// serving (managedFields, the last-applied annotation) is dropped on arrival: at 100k objects
// it is most of the memory.
import { withoutBookkeeping } from "../../core/bookkeeping";
import { wholeLists, type KubeObject, type ReflectorSink } from "../../kube/reflector";
import { objectKey } from "../../core/object-key";

export type ResourceKind =
  | "ingress"
  | "secret"
  /** Opaque Secrets: the users files auth-secret names. */
  | "authSecret"
  | "endpointSlice"
  | "service"
  | "ingressClass"
  | "ingressChecksum"
  | "secretChecksum"
  /** The ConfigMap of public keys that may sign checksum objects (BULWARK_CHECKSUM_KEYS). */
  | "checksumKeys";

export const RESOURCE_KINDS: ResourceKind[] = [
  "ingress",
  "secret",
  "authSecret",
  "endpointSlice",
  "service",
  "ingressClass",
  "ingressChecksum",
  "secretChecksum",
  "checksumKeys",
];

export interface Change {
  kind: ResourceKind;
  key: string;
  /** The new object, or undefined when it is gone. */
  object: KubeObject | undefined;
}

export class ObjectCache {
  readonly #maps = new Map<ResourceKind, Map<string, KubeObject>>(
    RESOURCE_KINDS.map(kind => [kind, new Map()]),
  );
  readonly #onChange: (change: Change) => void;

  constructor(onChange: (change: Change) => void) {
    this.#onChange = onChange;
  }

  map(kind: ResourceKind): ReadonlyMap<string, KubeObject> {
    return this.#maps.get(kind) as Map<string, KubeObject>;
  }

  /**
   * A sink for one reflector; `namespace` limits what its relists may remove. `onListed` is
   * called after each complete list has been taken in.
   */
  sink(kind: ResourceKind, namespace: string | undefined, onListed = () => {}): ReflectorSink {
    return wholeLists({
      replace: items => {
        this.#replace(kind, namespace, items);
        onListed();
      },
      upsert: object => this.#upsert(kind, withoutBookkeeping(object)),
      remove: object => this.#remove(kind, objectKey(object)),
    });
  }

  #replace(kind: ResourceKind, namespace: string | undefined, items: KubeObject[]): void {
    const map = this.#maps.get(kind) as Map<string, KubeObject>;
    const listed = new Set<string>();
    for (const item of items) {
      listed.add(objectKey(item));
      this.#upsert(kind, withoutBookkeeping(item));
    }
    const prefix = namespace === undefined ? "" : `${namespace}/`;
    for (const key of [...map.keys()]) {
      if (key.startsWith(prefix) && !listed.has(key)) this.#remove(kind, key);
    }
  }

  #upsert(kind: ResourceKind, object: KubeObject): void {
    const map = this.#maps.get(kind) as Map<string, KubeObject>;
    const key = objectKey(object);
    const version = object.metadata?.resourceVersion;
    if (version !== undefined && map.get(key)?.metadata?.resourceVersion === version) return;
    map.set(key, object);
    this.#onChange({ kind, key, object });
  }

  #remove(kind: ResourceKind, key: string): void {
    const map = this.#maps.get(kind) as Map<string, KubeObject>;
    if (!map.delete(key)) return;
    this.#onChange({ kind, key, object: undefined });
  }
}
