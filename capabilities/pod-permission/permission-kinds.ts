import { GenericKind, RegisterKind } from "kubernetes-fluent-client";
import { PERMISSION_API_GROUP, PERMISSION_API_VERSION, permissionKinds } from "./permission-crds";

export class PermissionGroup extends GenericKind {
  declare spec?: Record<string, unknown>;
}

export class PermissionProvider extends GenericKind {
  declare spec?: Record<string, unknown>;
}

RegisterKind(PermissionGroup, {
  group: PERMISSION_API_GROUP,
  version: PERMISSION_API_VERSION,
  kind: permissionKinds.group.kind,
  plural: permissionKinds.group.plural,
});
RegisterKind(PermissionProvider, {
  group: PERMISSION_API_GROUP,
  version: PERMISSION_API_VERSION,
  kind: permissionKinds.provider.kind,
  plural: permissionKinds.provider.plural,
});
