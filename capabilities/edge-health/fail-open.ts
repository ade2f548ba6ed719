// The edge-health webhooks fail open (packaging/webhook-policy.ts: failurePolicy Ignore): a Node,
// Endpoints or EndpointSlice write must never wait on Bulwark. But Pepr answers an action that
// throws with a refusal (the module's onError is "reject", which the security webhooks need), so
// an unexpected error here refused the write (CI: an EndpointSlice with `endpoints: null`). These
// mutations catch their own errors: logged with the object's name, the write goes on as it was
// sent, nothing of the mutation half-applied.
import { Log, type PeprMutateRequest } from "pepr";
import type { KubernetesObject } from "kubernetes-fluent-client";

export function failOpen<T extends KubernetesObject>(
  action: (req: PeprMutateRequest<T>) => void | Promise<void>,
): (req: PeprMutateRequest<T>) => Promise<void> {
  const mutation = async (req: PeprMutateRequest<T>): Promise<void> => {
    try {
      await action(req);
    } catch (error) {
      req.Raw = structuredClone(req.Request.object) as T;
      const { kind, namespace, name } = req.Request;
      Log.error(
        {
          kind: kind.kind,
          ns: namespace,
          name,
          err: error instanceof Error ? error.message : String(error),
        },
        `${action.name} failed; the write goes on as it was sent (this webhook fails open)`,
      );
    }
  };
  // Pepr names the action in its logs by the function's name.
  Object.defineProperty(mutation, "name", { value: action.name });
  return mutation;
}
