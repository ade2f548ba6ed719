// The public surface of core/permission: pod pre-authorization's pure logic, shared by the
// pod-permission capability, the permission server and the init client.

// Params of one permission, per provider type.
export {
  PROVIDER_TYPES,
  HTTP_ACTIONS,
  HTTP_RESOURCE_PATTERN,
  httpParamsSchema,
  MYSQL_TABLE_PRIVILEGES,
  MYSQL_DATABASE_PRIVILEGES,
  MYSQL_IDENTIFIER_PATTERN,
  mysqlIdentifierProblem,
  mysqlParamsSchema,
  paramsSchemas,
} from "./params";
export type {
  ProviderType,
  HttpAction,
  HttpParams,
  MysqlPrivilege,
  MysqlParams,
  PermissionParams,
} from "./params";

// PermissionProvider and PermissionGroup specs, and their admission checks.
export {
  DNS_LABEL_PATTERN,
  DNS_SUBDOMAIN_PATTERN,
  DNS_LABEL_MAX,
  DNS_SUBDOMAIN_MAX,
  PROVIDER_DEFAULTS,
  PROVIDER_LIMITS,
  MAX_PERMISSIONS,
  httpAddressProblem,
  mysqlAddressProblem,
  secretRefSchema,
  permissionProviderSpecSchema,
  parsePermissionProviderSpec,
  validatePermissionProvider,
  permissionSchema,
  permissionGroupSpecSchema,
  parsePermissionGroupSpec,
  validatePermissionGroup,
  providerInfo,
} from "./spec";
// Who may use a provider, and for what.
export {
  labelSelectorSchema,
  selectorMatches,
  globMatches,
  type LabelSelector,
  type AllowedParams,
  type GroupNamespace,
  type ProviderPolicy,
} from "./provider-policy";
export type {
  SecretRef,
  PermissionProviderSpec,
  PermissionGroupSpec,
  ProviderInfo,
  ResolvedPermission,
  ResolvedPermissionGroup,
} from "./spec";

// The pod, as pod permission reads and writes it.
export { podDisplayName } from "./pod";
export type {
  PermissionPod,
  PodMetadata,
  Container,
  EnvVar,
  VolumeMount,
  SecurityContext,
  Volume,
} from "./pod";

// CREATE-time injection.
export {
  INIT_CONTAINER_NAME,
  TOKEN_VOLUME_NAME,
  TOKEN_MOUNT_PATH,
  TOKEN_FILE,
  TOKEN_PATH,
  INIT_USER_ID,
  INIT_ENV,
  INIT_RESOURCES,
  injectConfigSchema,
  parseInjectConfig,
  planInjection,
  bulwarkInitContainer,
  tokenVolume,
  freeVolumeName,
  TOKEN_EXPIRATION,
} from "./inject";
export type { InjectConfig, InjectDecision } from "./inject";
export { parseCaBundle } from "./ca-bundle";

// The grant record and revocation.
export { grantRecordSchema, parseGrantRecord, serializeGrantRecord } from "./grant-record";
export type { GrantRecord } from "./grant-record";
export { revocationPlan } from "./finalizer";
export type { RevocationPlan } from "./finalizer";

export {
  BREAKER_THRESHOLD,
  BREAKER_ERROR_MAX,
  CLOSED_BREAKER,
  breakerRecordSchema,
  isBreakerOpen,
  breakerGate,
  recordFailure,
  recordSuccess,
  resetBreaker,
  serializeBreaker,
  parseBreaker,
  readBreaker,
  writeBreaker,
  staleBreakerKeys,
} from "./breaker";
export type { BreakerRecord } from "./breaker";
export {
  CONFIGMAP_KEY_PATTERN,
  CONFIGMAP_KEY_MAX,
  CONFIGMAP_DATA_MAX_BYTES,
  configMapKeyProblems,
  configMapDataBytes,
} from "./configmap";

// zod issues as FieldErrors.
export { fieldPath, issueErrors, parseFields, requiredFieldMessages } from "./field-errors";
