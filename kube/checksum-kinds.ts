// The checksum objects as kubernetes-fluent-client model classes, so Pepr bindings and K8s() calls
// (the module and the CLI) can name them.
import { GenericKind, RegisterKind } from "kubernetes-fluent-client";
import { CHECKSUM_GROUP } from "../core/names";
import { CHECKSUM_VERSION, checksumKinds, type ChecksumStatus } from "../core/checksum/crd";

export class IngressCheckSum extends GenericKind {
  declare spec?: Record<string, unknown>;
  declare status?: ChecksumStatus;
}

export class SecretCheckSum extends GenericKind {
  declare spec?: Record<string, unknown>;
  declare status?: ChecksumStatus;
}

RegisterKind(IngressCheckSum, {
  group: CHECKSUM_GROUP,
  version: CHECKSUM_VERSION,
  kind: checksumKinds.ingress.kind,
  plural: checksumKinds.ingress.plural,
});
RegisterKind(SecretCheckSum, {
  group: CHECKSUM_GROUP,
  version: CHECKSUM_VERSION,
  kind: checksumKinds.secret.kind,
  plural: checksumKinds.secret.plural,
});

export const checksumModel = { ingress: IngressCheckSum, secret: SecretCheckSum } as const;
