// The `params` of one permission, per provider type. The CRD keeps params schemaless
// (x-kubernetes-preserve-unknown-fields) and these schemas are the only validation, run at
// admission and again by the permission server before it calls a provider.
import { z } from "zod";

export const PROVIDER_TYPES = ["http", "mysql"] as const;
export type ProviderType = (typeof PROVIDER_TYPES)[number];

function oneOf<T extends string>(values: readonly T[]): z.core.$ZodErrorMap {
  return issue => `must be one of ${values.join(", ")}; got ${JSON.stringify(issue.input)}`;
}

// ---- http: an authorization API that grants a permission level on a resource to an IP.

/** Permission levels of the HTTP provider, weakest first. */
export const HTTP_ACTIONS = ["read", "write", "admin"] as const;
export type HttpAction = (typeof HTTP_ACTIONS)[number];

/** A resource identifier: `orders-db`, `kafka:topic/payments`, `svc/billing.v2`. */
export const HTTP_RESOURCE_PATTERN = /^[A-Za-z0-9](?:[A-Za-z0-9._:/-]*[A-Za-z0-9])?$/;
const HTTP_RESOURCE_MAX = 253;

export const httpParamsSchema = z.strictObject({
  resource: z
    .string()
    .max(HTTP_RESOURCE_MAX, `must be at most ${HTTP_RESOURCE_MAX} characters`)
    .regex(
      HTTP_RESOURCE_PATTERN,
      "must be letters, digits and '.', '_', ':', '/', '-', starting and ending with a letter or digit",
    )
    // The provider may put it in a URL path: no empty or parent segments.
    .refine(value => !value.includes("//") && !value.includes(".."), {
      message: "must not contain '//' or '..'",
    }),
  action: z.enum(HTTP_ACTIONS, { error: oneOf(HTTP_ACTIONS) }),
  /** The one port of the resource the grant opens; all ports when absent. */
  port: z.int().min(1).max(65535).optional(),
});
export type HttpParams = z.infer<typeof httpParamsSchema>;

// ---- mysql: GRANT <privileges> ON `database`.`table` (or `database`.*) TO the pod's host.

/** Privileges that apply to a table (MySQL 8 "Permissible Privileges": table level). */
export const MYSQL_TABLE_PRIVILEGES = [
  "SELECT",
  "INSERT",
  "UPDATE",
  "DELETE",
  "CREATE",
  "DROP",
  "INDEX",
  "ALTER",
  "REFERENCES",
  "TRIGGER",
  "CREATE VIEW",
  "SHOW VIEW",
] as const;

/**
 * Privileges that apply to a whole database: the table ones plus these. Global and administrative
 * privileges (ALL, GRANT OPTION, SUPER, FILE, PROCESS, CREATE USER …) are never granted to a pod.
 */
export const MYSQL_DATABASE_PRIVILEGES = [
  ...MYSQL_TABLE_PRIVILEGES,
  "CREATE TEMPORARY TABLES",
  "LOCK TABLES",
  "EXECUTE",
  "CREATE ROUTINE",
  "ALTER ROUTINE",
  "EVENT",
] as const;
export type MysqlPrivilege = (typeof MYSQL_DATABASE_PRIVILEGES)[number];

const TABLE_PRIVILEGES: ReadonlySet<string> = new Set(MYSQL_TABLE_PRIVILEGES);

/**
 * A database or table name the provider can quote with backticks without escaping: ASCII letters,
 * digits and '_', at most 64 characters (MySQL's limit), not digits only. No backtick, quote, dot,
 * space, wildcard or comment marker can get through, so no params value can change the statement.
 */
export const MYSQL_IDENTIFIER_PATTERN = /^[A-Za-z0-9_]{1,64}$/;

/** Why `value` is not an identifier Bulwark will quote, or undefined when it is one. */
export function mysqlIdentifierProblem(value: string): string | undefined {
  if (!MYSQL_IDENTIFIER_PATTERN.test(value)) {
    return `must be 1-64 ASCII letters, digits or '_'; got ${JSON.stringify(value)}`;
  }
  if (/^\d+$/.test(value)) return `must not be digits only; got ${JSON.stringify(value)}`;
  return undefined;
}

const mysqlIdentifier = z.string().superRefine((value, ctx) => {
  const problem = mysqlIdentifierProblem(value);
  if (problem) ctx.addIssue({ code: "custom", message: problem, input: value });
});

/**
 * The server's own schemas: a grant on them hands out the accounts, the grants themselves or the
 * server's internals. Refused in any case (on a case-insensitive file system `MySQL` is `mysql`).
 */
export const MYSQL_SYSTEM_SCHEMAS: readonly string[] = [
  "mysql",
  "information_schema",
  "performance_schema",
  "sys",
];

const mysqlDatabase = mysqlIdentifier.superRefine((value, ctx) => {
  if (!MYSQL_SYSTEM_SCHEMAS.includes(value.toLowerCase())) return;
  const message = `${JSON.stringify(value)} is a system schema (${MYSQL_SYSTEM_SCHEMAS.join(", ")}): never granted`;
  ctx.addIssue({ code: "custom", message, input: value });
});

export const mysqlParamsSchema = z
  .strictObject({
    database: mysqlDatabase,
    /** One table; every table of the database when absent. */
    table: mysqlIdentifier.optional(),
    privileges: z
      .array(z.enum(MYSQL_DATABASE_PRIVILEGES, { error: oneOf(MYSQL_DATABASE_PRIVILEGES) }))
      .min(1, "must name at least one privilege"),
  })
  .superRefine((params, ctx) => {
    const seen = new Map<string, number>();
    for (const [index, privilege] of params.privileges.entries()) {
      const first = seen.get(privilege);
      if (first !== undefined) {
        ctx.addIssue({
          code: "custom",
          path: ["privileges", index],
          message: `repeats privileges[${first}] (${privilege})`,
          input: privilege,
        });
      } else seen.set(privilege, index);
      if (params.table !== undefined && !TABLE_PRIVILEGES.has(privilege)) {
        ctx.addIssue({
          code: "custom",
          path: ["privileges", index],
          message: `${privilege} applies to a whole database, not to table ${params.table}`,
          input: privilege,
        });
      }
    }
  });
export type MysqlParams = z.infer<typeof mysqlParamsSchema>;

/** The params schema of each provider type. */
export const paramsSchemas = {
  http: httpParamsSchema,
  mysql: mysqlParamsSchema,
} as const satisfies Record<ProviderType, z.ZodType>;

/** Params as a provider of that type reads them. */
export type PermissionParams =
  | { type: "http"; params: HttpParams }
  | { type: "mysql"; params: MysqlParams };
