import { Capability, a } from "pepr";
import { validateIngress, validateTlsSecret } from "./admission";

export const IngressGuard = new Capability({
  name: "ingress-guard",
  description: "Validates Ingress and TLS Secrets and checks them against the published checksums.",
});

const { When } = IngressGuard;

When(a.Ingress).IsCreatedOrUpdated().Validate(validateIngress);
When(a.Secret).IsCreatedOrUpdated().Validate(validateTlsSecret);
