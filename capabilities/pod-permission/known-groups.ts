// PermissionGroups the admission process has seen, kept from a watch. A Pod naming a group cost
// one API read per create: about 2 of the validating webhook's 6.4 ms mean (hack/bench/README.md),
// and one read per pod of a scale-up. A group the watch holds is admitted at once. One it does not
// hold (applied a moment before its pods, or the watch not listed yet) is read from the API server
// as before, so no pod is refused on the watch's word. A group deleted a moment ago may still admit
// a pod: this check is there to name the mistake at admission; the permission server, which reads
// the group when the pod registers, is the gate.
import type { KubernetesObject } from "@kubernetes/client-node";
import { startedOnFirstUse, type ListWatchOf } from "../../kube/list-watch";
import { moduleListWatch } from "../pepr/watches";
import { resourcePath } from "../../kube/api-paths";
import { PERMISSION_GROUPS } from "./permission-crds";
import { namespacedName, objectKey } from "../../core/object-key";

/** The names of the groups a watch holds; pure, fed by the watch. */
export class GroupNames {
  readonly #names = new Set<string>();

  put(group: KubernetesObject): void {
    this.#names.add(objectKey(group));
  }

  remove(group: KubernetesObject): void {
    this.#names.delete(objectKey(group));
  }

  has(namespace: string, name: string): boolean {
    return this.#names.has(namespacedName(namespace, name));
  }
}

/** The names and the watch that feeds them, started on first use. */
export class WatchedGroups {
  readonly names = new GroupNames();
  readonly #watch: () => unknown;

  /** `listWatch`: the PermissionGroups' (all namespaces, the default kubeconfig's cluster). */
  constructor(listWatch: ListWatchOf<KubernetesObject> = groupListWatch) {
    this.#watch = startedOnFirstUse(() => listWatch(this.names, "(admission)"));
  }

  /** True when the watch holds the group; false says nothing (ask the API server). */
  holds(namespace: string, name: string): boolean {
    this.#watch();
    return this.names.has(namespace, name);
  }
}

/** Every PermissionGroup into `feed`, which keeps what it reads (GroupNames: the names). */
export const groupListWatch: ListWatchOf<KubernetesObject> = (feed, who, options) =>
  moduleListWatch(
    {
      path: resourcePath(PERMISSION_GROUPS),
      what: `permissiongroups ${who}`,
    },
    feed,
    options,
  );

export const knownGroups = new WatchedGroups();
