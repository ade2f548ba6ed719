// The specs of PermissionProvider and PermissionGroup (bulwark.dev/v1alpha1), their validation
// at admission, and the resolved group the permission server grants from.
import { z } from "zod";
import { fail, ok, type FieldError, type Result } from "../result";
import { parseFields } from "./field-errors";
import { PROVIDER_TYPES, paramsSchemas, type PermissionParams, type ProviderType } from "./params";
import {
  allowedParamsSchema,
  labelSelectorSchema,
  namespaceRefusal,
  paramRefusal,
  type GroupNamespace,
  type ProviderPolicy,
} from "./provider-policy";

/** RFC 1123 label: a namespace, a permission's name inside its group. */
export const DNS_LABEL_PATTERN = /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?$/;
/** RFC 1123 subdomain: an object name (PermissionProvider, PermissionGroup, Secret). */
export const DNS_SUBDOMAIN_PATTERN =
  /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*$/;
export const DNS_LABEL_MAX = 63;
export const DNS_SUBDOMAIN_MAX = 253;

const dnsLabel = z
  .string()
  .max(DNS_LABEL_MAX, `must be at most ${DNS_LABEL_MAX} characters`)
  .regex(DNS_LABEL_PATTERN, "must be lowercase letters, digits and '-' (RFC 1123 label)");
const objectName = z
  .string()
  .max(DNS_SUBDOMAIN_MAX, `must be at most ${DNS_SUBDOMAIN_MAX} characters`)
  .regex(DNS_SUBDOMAIN_PATTERN, "must be a Kubernetes object name (RFC 1123 subdomain)");

// ---- PermissionProvider (cluster-scoped)

/** Values the CRD defaults and zod defaults share; a test keeps the CRD in step. */
export const PROVIDER_DEFAULTS = {
  timeoutSeconds: 5,
  rateLimit: { qps: 10, burst: 20 },
  concurrency: 4,
} as const;
export const PROVIDER_LIMITS = {
  timeoutSeconds: { min: 1, max: 300 },
  qps: { max: 10_000 },
  burst: { min: 1, max: 100_000 },
  concurrency: { min: 1, max: 256 },
  address: { max: 2048 },
} as const;

/** host[:port], the host a DNS name, an IPv4 address or a bracketed IPv6 address. */
export const MYSQL_ADDRESS_PATTERN =
  /^(?:[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*|\[[0-9a-fA-F:.]+\])(?::(\d{1,5}))?$/;

/** Why `address` is not an http(s) base URL without credentials, or undefined. */
export function httpAddressProblem(address: string): string | undefined {
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    return `must be an absolute http:// or https:// URL; got ${JSON.stringify(address)}`;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return `must use http or https; got ${JSON.stringify(url.protocol.slice(0, -1))}`;
  }
  if (url.username || url.password) {
    return "must not carry credentials: name a Secret in credentialsSecretRef";
  }
  if (url.search || url.hash) return "must not have a query or a fragment";
  return undefined;
}

/** Why `address` is not host[:port] for MySQL, or undefined. */
export function mysqlAddressProblem(address: string): string | undefined {
  const match = MYSQL_ADDRESS_PATTERN.exec(address);
  if (!match) {
    return `must be host[:port] (a DNS name, an IPv4 address or [IPv6]); got ${JSON.stringify(address)}`;
  }
  const port = match[1] === undefined ? undefined : Number(match[1]);
  if (port !== undefined && (port < 1 || port > 65535)) return `port must be 1..65535; got ${port}`;
  return undefined;
}

function addressSchema(problem: (address: string) => string | undefined) {
  return z
    .string()
    .max(PROVIDER_LIMITS.address.max)
    .superRefine((value, ctx) => {
      const message = problem(value);
      if (message) ctx.addIssue({ code: "custom", message, input: value });
    });
}

export const secretRefSchema = z.object({ namespace: dnsLabel, name: objectName });
export type SecretRef = z.infer<typeof secretRefSchema>;

const L = PROVIDER_LIMITS;
const D = PROVIDER_DEFAULTS;
const commonProviderFields = {
  timeoutSeconds: z
    .int()
    .min(L.timeoutSeconds.min)
    .max(L.timeoutSeconds.max)
    .default(D.timeoutSeconds),
  rateLimit: z
    .object({
      qps: z.number().gt(0).max(L.qps.max).default(D.rateLimit.qps),
      burst: z.int().min(L.burst.min).max(L.burst.max).default(D.rateLimit.burst),
    })
    .default({ ...D.rateLimit }),
  concurrency: z.int().min(L.concurrency.min).max(L.concurrency.max).default(D.concurrency),
  /** The namespaces whose groups may use it; absent: every namespace. */
  namespaceSelector: labelSelectorSchema.optional(),
  /** The databases (mysql) or resources (http) a group may name; absent: any. */
  allowedParams: allowedParamsSchema.optional(),
};

export const permissionProviderSpecSchema = z.discriminatedUnion(
  "type",
  [
    z.object({
      type: z.literal("http"),
      address: addressSchema(httpAddressProblem),
      /** Optional: a bearer token or basic-auth pair for the authorization API. */
      credentialsSecretRef: secretRefSchema.optional(),
      ...commonProviderFields,
    }),
    z.object({
      type: z.literal("mysql"),
      address: addressSchema(mysqlAddressProblem),
      /** Required: the account that runs GRANT and REVOKE. */
      credentialsSecretRef: secretRefSchema,
      ...commonProviderFields,
    }),
  ],
  {
    error: issue =>
      issue.code === "invalid_union" ? `must be one of ${PROVIDER_TYPES.join(", ")}` : undefined,
  },
);
export type PermissionProviderSpec = z.infer<typeof permissionProviderSpecSchema>;

/** A PermissionProvider's spec with its defaults applied, or every problem under `spec.`. */
export function parsePermissionProviderSpec(spec: unknown): Result<PermissionProviderSpec> {
  return parseFields(permissionProviderSpecSchema, spec, "spec");
}

/** Admission's view: every problem of a PermissionProvider's spec, none when it is valid. */
export function validatePermissionProvider(spec: unknown): FieldError[] {
  const result = parsePermissionProviderSpec(spec);
  return result.ok ? [] : result.errors;
}

// ---- PermissionGroup (namespaced)

/** Permissions per group, at most: the grant record of a pod carries them all in one annotation. */
export const MAX_PERMISSIONS = 32;

export const permissionSchema = z.object({
  name: dnsLabel,
  provider: objectName,
  params: z.record(z.string(), z.unknown()),
});

export const permissionGroupSpecSchema = z.object({
  permissions: z
    .array(permissionSchema)
    .min(1, "must list at least one permission")
    .max(MAX_PERMISSIONS, `must list at most ${MAX_PERMISSIONS} permissions`),
  /**
   * Register the pod (namespace, name, UID, IP) in the inventory before granting, as TKEx's
   * init-action-server registers pods in its CMDB. Off unless asked for.
   */
  registerWithCmdb: z.boolean().default(false),
});
export type PermissionGroupSpec = z.infer<typeof permissionGroupSpecSchema>;

/** What admission and the permission server need to know of a provider. */
export interface ProviderInfo {
  type: ProviderType;
  policy?: ProviderPolicy;
}

export function providerInfo(spec: PermissionProviderSpec): ProviderInfo {
  const { type, namespaceSelector, allowedParams } = spec;
  return { type, policy: { namespaceSelector, allowedParams } };
}

/** One permission with its params parsed for its provider's type. */
export type ResolvedPermission = { name: string; provider: string } & PermissionParams;

export interface ResolvedPermissionGroup {
  permissions: ResolvedPermission[];
  registerWithCmdb: boolean;
}

function resolvePermission(
  permission: z.infer<typeof permissionSchema>,
  index: number,
  providers: ReadonlyMap<string, ProviderInfo>,
  namespace: GroupNamespace | undefined,
): Result<ResolvedPermission> {
  const field = `spec.permissions[${index}]`;
  const provider = providers.get(permission.provider);
  const missing = `provider ${JSON.stringify(permission.provider)} does not exist`;
  if (!provider) return fail([{ field: `${field}.provider`, message: missing }]);
  const refused =
    namespace && namespaceRefusal(permission.provider, provider.policy ?? {}, namespace);
  if (refused) return fail([{ field: `${field}.provider`, message: refused }]);
  const resolved = resolveParams(permission, provider.type, `${field}.params`);
  if (!resolved.ok) return resolved;
  const allowed = provider.policy?.allowedParams;
  const [key, list, value] =
    resolved.value.type === "http"
      ? (["resource", allowed?.resources, resolved.value.params.resource] as const)
      : (["database", allowed?.databases, resolved.value.params.database] as const);
  const outside = paramRefusal(list, value, permission.provider);
  return outside ? fail([{ field: `${field}.params.${key}`, message: outside }]) : resolved;
}

function resolveParams(
  permission: z.infer<typeof permissionSchema>,
  type: ProviderType,
  field: string,
): Result<ResolvedPermission> {
  const base = { name: permission.name, provider: permission.provider };
  if (type === "http") {
    const params = parseFields(paramsSchemas.http, permission.params, field);
    return params.ok ? ok({ ...base, type: "http", params: params.value }) : params;
  }
  const params = parseFields(paramsSchemas.mysql, permission.params, field);
  return params.ok ? ok({ ...base, type: "mysql", params: params.value }) : params;
}

function duplicateNames(spec: PermissionGroupSpec): FieldError[] {
  const seen = new Map<string, number>();
  const errors: FieldError[] = [];
  for (const [index, { name }] of spec.permissions.entries()) {
    const first = seen.get(name);
    if (first === undefined) seen.set(name, index);
    else {
      errors.push({
        field: `spec.permissions[${index}].name`,
        message: `repeats spec.permissions[${first}].name (${JSON.stringify(name)})`,
      });
    }
  }
  return errors;
}

/**
 * A PermissionGroup's spec with every permission's params parsed for its provider's type, or
 * every problem: shape, repeated names, unknown providers, bad params, each naming its field.
 */
export function parsePermissionGroupSpec(
  spec: unknown,
  providers: ReadonlyMap<string, ProviderInfo>,
  /** The group's namespace, for the providers' namespaceSelector; undefined: not checked. */
  namespace?: GroupNamespace,
): Result<ResolvedPermissionGroup> {
  const parsed = parseFields(permissionGroupSpecSchema, spec, "spec");
  if (!parsed.ok) return parsed;
  const errors = duplicateNames(parsed.value);
  const permissions: ResolvedPermission[] = [];
  for (const [index, permission] of parsed.value.permissions.entries()) {
    const resolved = resolvePermission(permission, index, providers, namespace);
    if (resolved.ok) permissions.push(resolved.value);
    else errors.push(...resolved.errors);
  }
  if (errors.length > 0) return fail(errors);
  return ok({ permissions, registerWithCmdb: parsed.value.registerWithCmdb });
}

/** Admission's view: every problem of a PermissionGroup's spec, none when it is valid. */
export function validatePermissionGroup(
  spec: unknown,
  providers: ReadonlyMap<string, ProviderInfo>,
  namespace?: GroupNamespace,
): FieldError[] {
  const result = parsePermissionGroupSpec(spec, providers, namespace);
  return result.ok ? [] : result.errors;
}
