export { EdgeHealth } from "./edge-health";
export { IngressGuard } from "./ingress-guard";
export { PodPermission } from "./pod-permission";
