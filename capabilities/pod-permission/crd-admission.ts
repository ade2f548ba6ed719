// Admission of PermissionGroup and PermissionProvider: zod-checked params per provider type, and
// a group may only name providers that exist.
import { K8s, kind, type PeprValidateRequest } from "pepr";
import {
  parsePermissionProviderSpec,
  providerInfo,
  validatePermissionGroup,
  validatePermissionProvider,
  type ProviderInfo,
} from "../../core/permission";
import { formatErrors, type FieldError } from "../../core/result";
import { PermissionGroup, PermissionProvider } from "./permission-kinds";

type Response = ReturnType<PeprValidateRequest<PermissionGroup>["Approve"]>;

function answer(
  req: PeprValidateRequest<PermissionGroup | PermissionProvider>,
  what: string,
  errors: FieldError[],
): Response {
  if (errors.length === 0) return req.Approve();
  const ns = req.Request.namespace ? `${req.Request.namespace}/` : "";
  return req.Deny(
    `${what} ${ns}${req.Raw.metadata?.name} rejected by Bulwark: ${formatErrors(errors)}`,
    422,
  );
}

export async function validateGroup(req: PeprValidateRequest<PermissionGroup>): Promise<Response> {
  const providers = await K8s(PermissionProvider).Get();
  // Only providers that parse count: a group cannot rely on one Bulwark could not use.
  const known = new Map<string, ProviderInfo>();
  for (const provider of providers.items) {
    const spec = parsePermissionProviderSpec(provider.spec);
    if (spec.ok && provider.metadata?.name)
      known.set(provider.metadata.name, providerInfo(spec.value));
  }
  // The providers' namespaceSelector is matched against the group's namespace's labels.
  const name = req.Request.namespace ?? "";
  const namespace = { name, labels: (await K8s(kind.Namespace).Get(name)).metadata?.labels ?? {} };
  return answer(req, "PermissionGroup", validatePermissionGroup(req.Raw.spec, known, namespace));
}

export function validateProvider(req: PeprValidateRequest<PermissionProvider>): Response {
  return answer(req, "PermissionProvider", validatePermissionProvider(req.Raw.spec));
}
