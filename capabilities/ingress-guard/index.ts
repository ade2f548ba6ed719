import { Capability } from "pepr";

// Bindings arrive with the ingress-guard issue: Ingress and TLS Secret admission, checksum status.
export const IngressGuard = new Capability({
  name: "ingress-guard",
  description: "Validates Ingress and TLS Secrets and checks them against the published checksums.",
});
