// The `mysql` provider: gives the pod's IP a database account, as MySQL and MariaDB match
// accounts by client host. grant = CREATE USER IF NOT EXISTS '<podUser>'@'<ip>', ALTER USER (the
// password follows the Secret), GRANT <privileges> ON <db>.<table|*>. Revoke takes away only this
// pod's grant: when no other pod's ledger holds anything at the IP through the provider, DROP USER
// IF EXISTS '<podUser>'@'<ip>'; otherwise REVOKE the privileges on <db>.<table|*> that no other
// pod holds on the same target (an IP reused while the old pod was Terminating keeps the new
// pod's grants). Synchronous: grant answers `granted` or `denied`, never `pending`.
//
// Each call opens one connection with the admin account, runs its statements under one deadline
// (connect included) and closes it; the server's lock_wait_timeout is set to the same deadline.
// Values (user, host, password) are escaped by the driver and identifiers quoted with escapeId;
// privileges come from the schema's fixed list only. The session drops NO_BACKSLASH_ESCAPES from
// its sql_mode first, so backslash escaping means what the driver assumes on any server. Grant
// and revoke of one account take a named lock (GET_LOCK) for the session, so a revoke racing a
// grant of the same pod IP (an IP reused by a new pod) runs before or after it, never between
// its CREATE USER and GRANT.
import { createHash } from "node:crypto";
import { isIP } from "node:net";
import { createConnection, escapeId, type Connection } from "mysql2";
import {
  MYSQL_DATABASE_PRIVILEGES,
  mysqlParamsSchema,
  type MysqlParams,
  type MysqlPrivilege,
} from "../../core/permission/params";
import { fail, ok, type FieldError, type Result } from "../../core/result";
import { errorText } from "../../kube/log";
import { abortError, clip, deadline, errorCode, parseParams } from "./errors";
import {
  TransientProviderError,
  type GrantRequest,
  type GrantState,
  type Provider,
  type RevokeRequest,
} from "./types";

/**
 * The credentials Secret's keys:
 * - `username`, `password`: the admin account the provider connects as. It needs CREATE USER and
 *   every privilege it grants, WITH GRANT OPTION (e.g. `GRANT CREATE USER ON *.* …` plus
 *   `GRANT SELECT, INSERT ON shop.* … WITH GRANT OPTION`).
 * - `podUser`, `podPassword`: the account the pods log in as; the provider creates it once per
 *   pod IP (`'<podUser>'@'<ip>'`). The application reads the same two values from its own Secret.
 */
export interface MysqlCredentials {
  username: string;
  password: string;
  podUser: string;
  podPassword: string;
}

/** A pod user the provider creates: plain ASCII, within MySQL's 32-character limit. */
export const MYSQL_POD_USER_PATTERN = /^[A-Za-z0-9_.-]{1,32}$/;

export function parseMysqlCredentials(
  data: Readonly<Record<string, string>> | undefined,
): Result<MysqlCredentials> {
  const errors: FieldError[] = [];
  const take = (key: keyof MysqlCredentials): string => {
    const value = data?.[key];
    if (value === undefined || value === "") errors.push({ field: key, message: "is required" });
    return value ?? "";
  };
  const credentials = {
    username: take("username"),
    password: take("password"),
    podUser: take("podUser"),
    podPassword: take("podPassword"),
  };
  if (credentials.podUser !== "" && !MYSQL_POD_USER_PATTERN.test(credentials.podUser)) {
    errors.push({
      field: "podUser",
      message: "must be 1-32 ASCII letters, digits, '_', '.' or '-'",
    });
  }
  return errors.length > 0 ? fail(errors) : ok(credentials);
}

/** host and port from a spec address (`db.example`, `db.example:3307`, `[fd00::1]:3306`). */
export function mysqlEndpoint(address: string): { host: string; port: number } {
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(address);
  if (!match) throw new RangeError(`not a MySQL address: ${JSON.stringify(address)}`);
  const host = (match[1] as string).replace(/^\[|\]$/g, "");
  return { host, port: match[2] === undefined ? 3306 : Number(match[2]) };
}

export interface Statement {
  sql: string;
  values: unknown[];
  /**
   * Set on statements built from the permission's params (the GRANT): only their refusals are
   * `denied`. A refusal of CREATE/ALTER/DROP USER is the admin account's setup (missing CREATE
   * USER, a password policy rejecting podPassword), the same for every pod: transient.
   */
  fromParams?: true;
  /** A REVOKE: the server saying the grant is not there (already revoked) is success. */
  absentIsDone?: true;
}

/** `db`.`table`, or `db`.* with the database name's `_` and `%` escaped (they are wildcards). */
export function grantTarget(params: MysqlParams): string {
  if (params.table !== undefined) return `${escapeId(params.database)}.${escapeId(params.table)}`;
  return `${escapeId(params.database.replace(/[_%]/g, "\\$&"))}.*`;
}

/** The statements of one grant, in order. */
export function grantStatements(
  credentials: Pick<MysqlCredentials, "podUser" | "podPassword">,
  ip: string,
  params: MysqlParams,
): Statement[] {
  // Only words from the fixed list reach the SQL, whatever the params held.
  const privileges = params.privileges.map(p => {
    const known = MYSQL_DATABASE_PRIVILEGES.find(k => k === p);
    if (!known) throw new RangeError(`unknown privilege ${JSON.stringify(p)}`);
    return known;
  });
  const { podUser, podPassword } = credentials;
  return [
    { sql: "CREATE USER IF NOT EXISTS ?@? IDENTIFIED BY ?", values: [podUser, ip, podPassword] },
    { sql: "ALTER USER ?@? IDENTIFIED BY ?", values: [podUser, ip, podPassword] },
    {
      sql: `GRANT ${privileges.join(", ")} ON ${grantTarget(params)} TO ?@?`,
      values: [podUser, ip],
      fromParams: true,
    },
  ];
}

/** What the server answers a REVOKE of a grant the account does not have. */
const ABSENT_GRANT_CODES: ReadonlySet<string> = new Set([
  "ER_NONEXISTING_GRANT",
  "ER_NONEXISTING_TABLE_GRANT",
]);

/**
 * The statements of one revoke. Nothing else held through the account (`stillHeld` empty): drop
 * it, which takes every privilege with it. Otherwise revoke this grant's privileges on its
 * target minus those another pod holds on the very same target (grants on `db`.* and on
 * `db`.`table` are separate rows, so only an equal target overlaps). Params that are not valid
 * mysql params (`undefined`) can never have been granted: only the drop, if any, applies. A held
 * entry whose params do not parse still keeps the account (it may be a grant in flight).
 */
export function revokeStatements(
  podUser: string,
  ip: string,
  params: MysqlParams | undefined,
  stillHeld: readonly Record<string, unknown>[],
): Statement[] {
  if (stillHeld.length === 0) {
    return [{ sql: "DROP USER IF EXISTS ?@?", values: [podUser, ip] }];
  }
  if (!params) return [];
  const target = grantTarget(params);
  const keep = new Set<string>();
  for (const held of stillHeld) {
    const other = mysqlParamsSchema.safeParse(held);
    if (other.success && grantTarget(other.data) === target) {
      for (const privilege of other.data.privileges) keep.add(privilege);
    }
  }
  const privileges = params.privileges
    .map(p => MYSQL_DATABASE_PRIVILEGES.find(k => k === p))
    .filter((p): p is MysqlPrivilege => p !== undefined && !keep.has(p));
  if (privileges.length === 0) return [];
  return [
    {
      sql: `REVOKE ${privileges.join(", ")} ON ${target} FROM ?@?`,
      values: [podUser, ip],
      absentIsDone: true,
    },
  ];
}

/**
 * Server errors that mean the request itself is wrong or not allowed: retrying the same grant
 * cannot succeed. Anything else (lock waits, deadlocks, lost connections, shutdowns, unknown
 * codes) is transient.
 */
export const MYSQL_DENIED_CODES: ReadonlySet<string> = new Set([
  "ER_PARSE_ERROR",
  "ER_NO_SUCH_TABLE",
  "ER_BAD_DB_ERROR",
  "ER_WRONG_DB_NAME",
  "ER_WRONG_TABLE_NAME",
  "ER_DBACCESS_DENIED_ERROR",
  "ER_TABLEACCESS_DENIED_ERROR",
  "ER_COLUMNACCESS_DENIED_ERROR",
  "ER_SPECIFIC_ACCESS_DENIED_ERROR",
  "ER_ACCESS_DENIED_ERROR",
  "ER_ILLEGAL_GRANT_FOR_TABLE",
  "ER_CANT_CREATE_USER_WITH_GRANT",
  "ER_WRONG_STRING_LENGTH",
  "ER_PASSWORD_NO_MATCH",
  "ER_PASSWORD_FORMAT",
  "ER_NOT_VALID_PASSWORD",
  "ER_WRONG_USAGE",
  "ER_NONEXISTING_GRANT",
  "ER_NONEXISTING_TABLE_GRANT",
  "ER_GRANT_WRONG_HOST_OR_USER",
  "ER_UNKNOWN_TABLE",
]);

/** A refusal by the server (see MYSQL_DENIED_CODES). */
class SqlRefused extends Error {}

type Phase = "connecting" | "running statements";

function sqlFailure(
  what: string,
  phase: Phase,
  error: unknown,
  statement: Statement | undefined,
): Error {
  const code = errorCode(error);
  const message = clip(errorText(error));
  // Before the session exists, every failure (refused, unreachable, our admin account rejected,
  // too many connections) is the server's or the setup's, never the pod's; so is a refusal of a
  // statement the params did not shape.
  const byParams = phase === "running statements" && statement?.fromParams === true;
  if (byParams && code !== undefined && MYSQL_DENIED_CODES.has(code)) {
    return new SqlRefused(`${what}: ${message} (${code})`);
  }
  return new TransientProviderError(`${what}: ${phase}: ${message}${code ? ` (${code})` : ""}`);
}

export interface MysqlProviderOptions {
  name: string;
  /** host[:port] (3306 by default). */
  address: string;
  /** One deadline for a whole call: connect and every statement. */
  timeoutMs: number;
  credentials: MysqlCredentials;
}

export class MysqlProvider implements Provider {
  readonly name: string;
  private readonly host: string;
  private readonly port: number;
  private readonly timeoutMs: number;
  private readonly credentials: MysqlCredentials;

  constructor(options: MysqlProviderOptions) {
    this.name = options.name;
    ({ host: this.host, port: this.port } = mysqlEndpoint(options.address));
    this.timeoutMs = options.timeoutMs;
    this.credentials = options.credentials;
  }

  async grant(request: GrantRequest, signal: AbortSignal): Promise<GrantState> {
    const params = this.params(request);
    if (!params.ok) return params.denied;
    const statements = grantStatements(this.credentials, request.ip, params.value);
    const jobId = `${this.credentials.podUser}@${request.ip}`;
    try {
      await this.session("grant", signal, request.ip, statements);
      return { state: "granted", jobId };
    } catch (error) {
      if (error instanceof SqlRefused) return { state: "denied", jobId, reason: error.message };
      throw error;
    }
  }

  /** Grants are synchronous: polling re-applies the grant, which also repairs a lost one. */
  poll(request: GrantRequest, _jobId: string, signal: AbortSignal): Promise<GrantState> {
    return this.grant(request, signal);
  }

  /**
   * Revokes this pod's grant at the IP (revokeStatements), deciding under the account's lock, so
   * a grant to another pod at the same IP is either in the ledger already or runs after.
   */
  async revoke(request: RevokeRequest, signal: AbortSignal): Promise<void> {
    if (isIP(request.ip) === 0) return; // nothing can have been granted to it
    const parsed = mysqlParamsSchema.safeParse(request.params);
    const params = parsed.success ? parsed.data : undefined;
    const { podUser } = this.credentials;
    // Every failure is transient here: a DROP USER or REVOKE the admin may not run is a setup
    // fault.
    await this.session("revoke", signal, request.ip, async () =>
      revokeStatements(podUser, request.ip, params, await request.stillHeld()),
    );
  }

  async close(): Promise<void> {}

  private params(request: GrantRequest) {
    if (isIP(request.ip) === 0) {
      const reason = `ip: must be an IPv4 or IPv6 address; got ${JSON.stringify(request.ip)}`;
      return { ok: false as const, denied: { state: "denied" as const, reason } };
    }
    return parseParams(mysqlParamsSchema, request.params);
  }

  /**
   * Connects, locks the account, runs `statements` in order (decided after the lock when given
   * as a function), disconnects: within the deadline.
   */
  private async session(
    what: string,
    caller: AbortSignal,
    ip: string,
    statements: Statement[] | (() => Promise<Statement[]>),
  ): Promise<void> {
    const limit = deadline(caller, this.timeoutMs);
    const connection = createConnection({
      host: this.host,
      port: this.port,
      user: this.credentials.username,
      password: this.credentials.password,
      connectTimeout: this.timeoutMs,
      multipleStatements: false,
    });
    // Errors also arrive as events (a socket reset after the work is done); the calls below
    // report the ones that matter.
    connection.on("error", () => undefined);
    const { promise: stopped, dispose } = abortPromise(limit.signal);
    let current: Statement | undefined;
    const run = async (statement: Statement): Promise<unknown> => {
      current = statement;
      try {
        const [rows] = await Promise.race([
          connection.promise().query(statement.sql, statement.values),
          stopped,
        ]);
        return rows;
      } catch (error) {
        const code = errorCode(error);
        if (statement.absentIsDone && code !== undefined && ABSENT_GRANT_CODES.has(code)) return [];
        throw error;
      }
    };
    let phase: Phase = "connecting";
    try {
      await Promise.race([connected(connection), stopped]);
      phase = "running statements";
      const waitSeconds = Math.max(1, Math.ceil(this.timeoutMs / 1000));
      for (const statement of sessionSetup(waitSeconds)) await run(statement);
      await this.lockAccount(run, ip, waitSeconds);
      const decided = typeof statements === "function" ? await statements() : statements;
      for (const statement of decided) await run(statement);
      connection.end(() => undefined);
    } catch (error) {
      connection.destroy();
      const aborted = abortError(caller, limit, `${what} (${phase})`, this.timeoutMs);
      throw (
        aborted ??
        (error instanceof TransientProviderError ? error : sqlFailure(what, phase, error, current))
      );
    } finally {
      dispose();
    }
  }

  /** GET_LOCK on the account; released when the connection closes. */
  private async lockAccount(
    run: (statement: Statement) => Promise<unknown>,
    ip: string,
    waitSeconds: number,
  ): Promise<void> {
    const account = `${this.credentials.podUser}@${ip}`;
    const rows = await run({
      sql: "SELECT GET_LOCK(?, ?) AS locked",
      values: [accountLockName(account), waitSeconds],
    });
    const locked = (rows as { locked?: unknown }[])[0]?.locked;
    if (Number(locked) !== 1) {
      throw new TransientProviderError(`another grant or revoke of ${account} holds its lock`);
    }
  }
}

/** A named lock per account, within MySQL's 64-character limit whatever the user and IP. */
export function accountLockName(account: string): string {
  return `bulwark:${createHash("sha1").update(account).digest("hex")}`;
}

/** Drops NO_BACKSLASH_ESCAPES (keeping the server's other modes) and bounds lock waits. */
function sessionSetup(waitSeconds: number): Statement[] {
  return [
    {
      sql:
        "SET SESSION sql_mode = TRIM(BOTH ',' FROM REPLACE(REPLACE(@@SESSION.sql_mode, " +
        "'NO_BACKSLASH_ESCAPES', ''), ',,', ',')), lock_wait_timeout = ?",
      values: [waitSeconds],
    },
  ];
}

function connected(connection: Connection): Promise<void> {
  return new Promise((resolve, reject) => {
    connection.connect(error => (error ? reject(error) : resolve()));
  });
}

/** A promise that rejects when `signal` aborts, and a way to stop listening. */
function abortPromise(signal: AbortSignal): { promise: Promise<never>; dispose(): void } {
  let onAbort = (): void => undefined;
  const promise = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  promise.catch(() => undefined);
  return { promise, dispose: () => signal.removeEventListener("abort", onAbort) };
}
