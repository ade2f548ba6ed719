// The one spelling of an object's key in Bulwark's caches, indexes and logs: `namespace/name`,
// or `name` for a cluster-scoped object (as client-go's MetaNamespaceKeyFunc spells it).

/** `namespace/name`, or `name` when there is no namespace. */
export function namespacedName(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

/** The object's `namespace/name`, or `name` for a cluster-scoped object. */
export function objectKey(object: { metadata?: { namespace?: string; name?: string } }): string {
  return namespacedName(object.metadata?.namespace, object.metadata?.name ?? "");
}
