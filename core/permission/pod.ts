// The parts of a v1 Pod that pod permission reads and writes, structurally typed so core/ needs
// no Kubernetes client library. A @kubernetes/client-node V1Pod is assignable to PermissionPod,
// and the init container Bulwark builds is assignable to V1Container (pod.test.ts checks both).

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: { apiVersion?: string; fieldPath: string } };
}

export interface VolumeMount {
  name: string;
  mountPath: string;
  readOnly?: boolean;
}

export interface SecurityContext {
  runAsNonRoot?: boolean;
  runAsUser?: number;
  runAsGroup?: number;
  readOnlyRootFilesystem?: boolean;
  allowPrivilegeEscalation?: boolean;
  privileged?: boolean;
  capabilities?: { add?: string[]; drop?: string[] };
  seccompProfile?: { type: string; localhostProfile?: string };
}

export interface Container {
  name: string;
  image?: string;
  imagePullPolicy?: string;
  env?: EnvVar[];
  volumeMounts?: VolumeMount[];
  resources?: {
    requests?: Record<string, string>;
    limits?: Record<string, string>;
  };
  securityContext?: SecurityContext;
  terminationMessagePolicy?: string;
}

export interface Volume {
  name: string;
  projected?: {
    defaultMode?: number;
    sources?: {
      serviceAccountToken?: { audience?: string; expirationSeconds?: number; path: string };
    }[];
  };
}

export interface PodMetadata {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
  finalizers?: string[];
  /** A string in admission and watch JSON; a Date when a client library has revived it. */
  deletionTimestamp?: string | Date;
}

export interface PermissionPod {
  metadata?: PodMetadata;
  spec?: {
    hostNetwork?: boolean;
    os?: { name?: string };
    initContainers?: Container[];
    containers?: Container[];
    volumes?: Volume[];
  };
  status?: { podIP?: string };
}

/** A pod's name for messages: its name, else `<generateName>*****` (not yet known at admission). */
export function podDisplayName(pod: PermissionPod): string {
  const { name, generateName } = pod.metadata ?? {};
  if (name) return name;
  return generateName ? `${generateName}*****` : "(unnamed)";
}
