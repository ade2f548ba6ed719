// Actions of the webhooks that fail open (packaging/webhook-policy.ts: failurePolicy Ignore): the
// edge-health mutations (a Node, Endpoints or EndpointSlice write must never wait on Bulwark) and
// the TLS Secret review (the gateway checks every pair again). failurePolicy covers only a
// webhook that does not answer; Pepr answers an action that throws with a refusal (the module's
// onError is "reject", which the fail-closed webhooks need), so an unexpected error refused the
// write (CI: an EndpointSlice with `endpoints: null`). These wrappers catch the action's error:
// logged with the object's name, the write goes on as it was sent, nothing half-applied.
import { Log, type PeprMutateRequest, type PeprValidateRequest } from "pepr";
import type { KubernetesObject } from "kubernetes-fluent-client";
import { describeError } from "../../kube/api-errors";

/** Logs an action's error with the object it was about, and what happens to the write; its one line. */
function logFailure(
  request: { kind: { kind: string }; namespace?: string; name: string },
  action: { name: string },
  error: unknown,
  outcome: string,
): string {
  const reason = describeError(error);
  const { kind, namespace, name } = request;
  Log.error(
    { kind: kind.kind, ns: namespace, name, err: reason },
    `${action.name} failed; ${outcome} (this webhook fails open)`,
  );
  return reason;
}

export function failOpenMutation<T extends KubernetesObject>(
  action: (req: PeprMutateRequest<T>) => void | Promise<void>,
): (req: PeprMutateRequest<T>) => Promise<void> {
  const mutation = async (req: PeprMutateRequest<T>): Promise<void> => {
    try {
      await action(req);
    } catch (error) {
      req.Raw = structuredClone(req.Request.object) as T;
      logFailure(req.Request, action, error, "the write goes on as it was sent");
    }
  };
  // Pepr names the action in its logs by the function's name.
  Object.defineProperty(mutation, "name", { value: action.name });
  return mutation;
}

type ValidateResponse = ReturnType<PeprValidateRequest<KubernetesObject>["Approve"]>;

/** A review that cannot be made approves, with a warning that says why. */
export function failOpenValidation<T extends KubernetesObject>(
  action: (req: PeprValidateRequest<T>) => Promise<ValidateResponse>,
): (req: PeprValidateRequest<T>) => Promise<ValidateResponse> {
  const validation = async (req: PeprValidateRequest<T>): Promise<ValidateResponse> => {
    try {
      return await action(req);
    } catch (error) {
      const reason = logFailure(req.Request, action, error, "the write is approved unreviewed");
      return req.Approve([
        `Bulwark could not review this ${req.Request.kind.kind} (${reason}); it was written unreviewed`,
      ]);
    }
  };
  Object.defineProperty(validation, "name", { value: action.name });
  return validation;
}
