// The parts of networking.k8s.io/v1 objects that Bulwark reads, structurally typed so that core/
// needs no Kubernetes client library.

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  creationTimestamp?: string | Date;
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
}

export interface ServiceBackend {
  name?: string;
  port?: { number?: number; name?: string };
}

export interface IngressBackend {
  service?: ServiceBackend;
  resource?: { apiGroup?: string; kind?: string; name?: string };
}

export interface HTTPIngressPath {
  path?: string;
  pathType?: string;
  backend?: IngressBackend;
}

export interface IngressRule {
  host?: string;
  http?: { paths?: HTTPIngressPath[] };
}

export interface IngressTLS {
  hosts?: string[];
  secretName?: string;
}

export interface Ingress {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec?: {
    ingressClassName?: string;
    defaultBackend?: IngressBackend;
    rules?: IngressRule[];
    tls?: IngressTLS[];
  };
}

export interface Secret {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  type?: string;
  data?: Record<string, string>;
}
