// PermissionGroup (namespaced) and PermissionProvider (cluster-scoped), bulwark.dev/v1alpha1, and
// PermissionGrant: the permission server's ledger (core/permission/ledger.ts), one per pod UID in
// the server's namespace, written by the server alone. The structural schemas below check shape
// and bounds; params are schemaless here and validated per provider type by core/permission's
// zod schemas, which admission runs.
import type { Condition } from "../../core/conditions";
import { customResourceDefinition } from "../../core/crd";
import {
  DNS_LABEL_MAX,
  DNS_LABEL_PATTERN,
  DNS_SUBDOMAIN_MAX,
  DNS_SUBDOMAIN_PATTERN,
  MAX_PERMISSIONS,
  PROVIDER_DEFAULTS,
  PROVIDER_LIMITS,
  PROVIDER_TYPES,
} from "../../core/permission";

export {
  permissionGroupSpecSchema,
  permissionProviderSpecSchema,
  type PermissionGroupSpec,
  type PermissionProviderSpec,
} from "../../core/permission";
import type { ApiResource } from "../../kube/api-paths";

export const PERMISSION_API_GROUP = "bulwark.dev";
export const PERMISSION_API_VERSION = "v1alpha1";
/** The condition both kinds carry: True when the spec is valid and, for a group, every provider exists. */
export const READY_CONDITION = "Ready";

export const permissionKinds = {
  group: {
    kind: "PermissionGroup",
    plural: "permissiongroups",
    singular: "permissiongroup",
    shortName: "pg",
    scope: "Namespaced",
  },
  provider: {
    kind: "PermissionProvider",
    plural: "permissionproviders",
    singular: "permissionprovider",
    shortName: "pp",
    scope: "Cluster",
  },
  grant: {
    kind: "PermissionGrant",
    plural: "permissiongrants",
    singular: "permissiongrant",
    shortName: "pgrant",
    scope: "Namespaced",
  },
} as const;
export type PermissionKind = keyof typeof permissionKinds;

const permissionApi = `/apis/${PERMISSION_API_GROUP}/${PERMISSION_API_VERSION}`;
export const PERMISSION_GROUPS: ApiResource = {
  api: permissionApi,
  plural: permissionKinds.group.plural,
};
export const PERMISSION_PROVIDERS: ApiResource = {
  api: permissionApi,
  plural: permissionKinds.provider.plural,
};

/** metav1.Condition, as `meta.SetStatusCondition` writes it (core/conditions.ts). */
export type PermissionCondition = Condition;

export interface PermissionResourceStatus {
  observedGeneration?: number;
  conditions?: PermissionCondition[];
}

/** The upstream validation of metav1.Condition, so a status patch fails the same way. */
const conditionItem = {
  type: "object",
  required: ["type", "status", "reason", "message", "lastTransitionTime"],
  properties: {
    type: {
      type: "string",
      maxLength: 316,
      pattern:
        "^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$",
    },
    status: { type: "string", enum: ["True", "False", "Unknown"] },
    reason: {
      type: "string",
      minLength: 1,
      maxLength: 1024,
      pattern: "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$",
    },
    message: { type: "string", maxLength: 32768 },
    lastTransitionTime: { type: "string", format: "date-time" },
    observedGeneration: { type: "integer", format: "int64", minimum: 0 },
  },
};

const permissionStatusSchema = {
  type: "object",
  properties: {
    observedGeneration: { type: "integer", format: "int64" },
    conditions: {
      type: "array",
      "x-kubernetes-list-type": "map",
      "x-kubernetes-list-map-keys": ["type"],
      items: conditionItem,
    },
  },
};

const readyColumn = {
  name: "Ready",
  type: "string",
  jsonPath: `.status.conditions[?(@.type=="${READY_CONDITION}")].status`,
};
const ageColumn = { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" };

const dnsLabel = { type: "string", maxLength: DNS_LABEL_MAX, pattern: DNS_LABEL_PATTERN.source };
const objectName = {
  type: "string",
  maxLength: DNS_SUBDOMAIN_MAX,
  pattern: DNS_SUBDOMAIN_PATTERN.source,
};

function groupSpecSchema() {
  return {
    type: "object",
    required: ["permissions"],
    properties: {
      permissions: {
        type: "array",
        minItems: 1,
        maxItems: MAX_PERMISSIONS,
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
        description: "The permissions every pod naming this group is granted before it starts.",
        items: {
          type: "object",
          required: ["name", "provider", "params"],
          properties: {
            name: { ...dnsLabel, description: "Unique in the group; names the grant in Events." },
            provider: { ...objectName, description: "The PermissionProvider that grants it." },
            params: {
              type: "object",
              "x-kubernetes-preserve-unknown-fields": true,
              description:
                "Per provider type. http: {resource, action: read|write|admin, port?}; mysql: {database, table?, privileges[]}.",
            },
          },
        },
      },
      registerWithCmdb: {
        type: "boolean",
        default: false,
        description:
          "Register the pod (namespace, name, UID, IP) in the inventory before granting.",
      },
    },
  };
}

function providerSpecSchema() {
  const L = PROVIDER_LIMITS;
  const D = PROVIDER_DEFAULTS;
  return {
    type: "object",
    required: ["type", "address"],
    "x-kubernetes-validations": [
      {
        rule: "self.type != 'mysql' || has(self.credentialsSecretRef)",
        message: "a mysql provider needs credentialsSecretRef",
        fieldPath: ".credentialsSecretRef",
      },
    ],
    properties: {
      type: { type: "string", enum: [...PROVIDER_TYPES], description: "The backend's protocol." },
      address: {
        type: "string",
        minLength: 1,
        maxLength: L.address.max,
        description: "http: a base URL (http:// or https://); mysql: host[:port].",
      },
      credentialsSecretRef: {
        type: "object",
        required: ["namespace", "name"],
        description: "The Secret holding the backend's credentials; required for mysql.",
        properties: { namespace: dnsLabel, name: objectName },
      },
      timeoutSeconds: {
        type: "integer",
        minimum: L.timeoutSeconds.min,
        maximum: L.timeoutSeconds.max,
        default: D.timeoutSeconds,
        description: "Per call to the backend.",
      },
      rateLimit: {
        type: "object",
        default: {},
        description: "A token bucket in front of the backend, shared by every grant and revoke.",
        properties: {
          qps: {
            type: "number",
            exclusiveMinimum: true,
            minimum: 0,
            maximum: L.qps.max,
            default: D.rateLimit.qps,
          },
          burst: {
            type: "integer",
            minimum: L.burst.min,
            maximum: L.burst.max,
            default: D.rateLimit.burst,
          },
        },
      },
      concurrency: {
        type: "integer",
        minimum: L.concurrency.min,
        maximum: L.concurrency.max,
        default: D.concurrency,
        description: "Calls in flight to the backend, at most.",
      },
      namespaceSelector: {
        type: "object",
        description:
          "The namespaces whose PermissionGroups may use this provider (a label selector); absent: every namespace.",
        properties: {
          matchLabels: { type: "object", additionalProperties: { type: "string" } },
          matchExpressions: {
            type: "array",
            items: {
              type: "object",
              required: ["key", "operator"],
              properties: {
                key: { type: "string" },
                operator: { type: "string", enum: ["In", "NotIn", "Exists", "DoesNotExist"] },
                values: { type: "array", items: { type: "string" } },
              },
            },
          },
        },
      },
      allowedParams: {
        type: "object",
        description:
          "What groups may ask of this provider: glob patterns ('*' matches anything) for params.database (mysql) or params.resource (http); absent: anything.",
        properties: {
          databases: { type: "array", minItems: 1, items: { type: "string" } },
          resources: { type: "array", minItems: 1, items: { type: "string" } },
        },
      },
    },
  };
}

function grantSpecSchema() {
  const podField = (description: string) => ({ type: "string", minLength: 1, description });
  return {
    type: "object",
    required: ["pod", "group", "entries"],
    properties: {
      pod: {
        type: "object",
        required: ["namespace", "name", "uid"],
        description: "The pod the grants belong to.",
        properties: {
          namespace: podField("The pod's namespace."),
          name: podField("The pod's name."),
          uid: podField("The pod's UID (also this object's name)."),
        },
      },
      group: { type: "string", minLength: 1, description: "The PermissionGroup granted." },
      entries: {
        type: "array",
        description:
          "One per (IP, permission): written before the provider is called, revoked and removed at the pod's deletion.",
        items: {
          type: "object",
          required: ["ip", "name", "provider", "params"],
          properties: {
            ip: { type: "string", minLength: 1 },
            name: { type: "string", minLength: 1 },
            provider: { type: "string", minLength: 1 },
            params: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
            grantedAt: {
              type: "string",
              format: "date-time",
              description: "When the provider said granted; absent while in flight.",
            },
          },
        },
      },
    },
  };
}

const SPEC_SCHEMAS = {
  group: groupSpecSchema,
  provider: providerSpecSchema,
  grant: grantSpecSchema,
} as const;

const PRINTER_COLUMNS = {
  group: [
    { name: "Permissions", type: "string", jsonPath: ".spec.permissions[*].name" },
    readyColumn,
    ageColumn,
  ],
  provider: [
    { name: "Type", type: "string", jsonPath: ".spec.type" },
    { name: "Address", type: "string", jsonPath: ".spec.address" },
    readyColumn,
    { name: "Concurrency", type: "integer", jsonPath: ".spec.concurrency", priority: 1 },
    { name: "Timeout", type: "integer", jsonPath: ".spec.timeoutSeconds", priority: 1 },
    ageColumn,
  ],
  grant: [
    { name: "Namespace", type: "string", jsonPath: ".spec.pod.namespace" },
    { name: "Pod", type: "string", jsonPath: ".spec.pod.name" },
    { name: "IP", type: "string", jsonPath: ".spec.entries[*].ip" },
    { name: "Permissions", type: "string", jsonPath: ".spec.entries[*].name" },
    ageColumn,
  ],
};

const DESCRIPTIONS = {
  group:
    "PermissionGroup: a named set of permissions granted to every pod annotated permission.bulwark.dev/group: <name> before its containers start.",
  provider:
    "PermissionProvider: how Bulwark's permission server reaches one authorization backend (http or mysql).",
  grant:
    "PermissionGrant: the permission server's ledger of what it granted to one pod (named by the pod's UID); written by the server only, read by revocation.",
};

export function permissionCrd(kind: PermissionKind) {
  return customResourceDefinition({
    group: PERMISSION_API_GROUP,
    version: PERMISSION_API_VERSION,
    scope: permissionKinds[kind].scope,
    names: permissionKinds[kind],
    description: DESCRIPTIONS[kind],
    printerColumns: PRINTER_COLUMNS[kind],
    spec: SPEC_SCHEMAS[kind](),
    status: permissionStatusSchema,
  });
}
