// Admission of PermissionGroup and PermissionProvider: zod-checked params per provider type, and
// a group may only name providers that exist.
import type { V1Namespace } from "@kubernetes/client-node";
import type { PeprValidateRequest } from "pepr";
import {
  parsePermissionProviderSpec,
  providerInfo,
  validatePermissionGroup,
  validatePermissionProvider,
  type ProviderInfo,
} from "../../core/permission";
import { formatErrors, type FieldError } from "../../core/result";
import { NAMESPACES, resourcePath } from "../../kube/api-paths";
import { keptAliveApi } from "../../kube/kept-alive-api";
import { PERMISSION_PROVIDERS } from "./permission-crds";
import type { PermissionGroup, PermissionProvider } from "./permission-kinds";

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
  // A fresh read (not the watch cache): a provider created a moment ago counts.
  const providers = await keptAliveApi().list<PermissionProvider>(
    resourcePath(PERMISSION_PROVIDERS),
  );
  // Only providers that parse count: a group cannot rely on one Bulwark could not use.
  const known = new Map<string, ProviderInfo>();
  for (const provider of providers) {
    const spec = parsePermissionProviderSpec(provider.spec);
    if (spec.ok && provider.metadata?.name)
      known.set(provider.metadata.name, providerInfo(spec.value));
  }
  // The providers' namespaceSelector is matched against the group's namespace's labels.
  const name = req.Request.namespace ?? "";
  const found = await keptAliveApi().get<V1Namespace>(resourcePath(NAMESPACES, { name }));
  const namespace = { name, labels: found.metadata?.labels ?? {} };
  return answer(req, "PermissionGroup", validatePermissionGroup(req.Raw.spec, known, namespace));
}

export function validateProvider(req: PeprValidateRequest<PermissionProvider>): Response {
  return answer(req, "PermissionProvider", validatePermissionProvider(req.Raw.spec));
}
