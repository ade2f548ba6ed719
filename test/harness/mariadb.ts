// A real MariaDB server from Debian for tests: a fresh datadir in a temp folder, bound to
// 127.0.0.1 on a free port with its socket beside the datadir, --skip-name-resolve so users are
// matched by IP. Pods are simulated by source addresses on loopback: a connection made from
// 127.0.0.7 is seen by the server as host 127.0.0.7 (see `connectFrom`).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createConnection, type Connection } from "mysql2/promise";
import { freePort } from "../../hack/control-plane/ports";
import { startProcess, type ManagedProcess } from "../../hack/control-plane/processes";
import { waitUntil } from "./wait";

const ROOT = resolve(__dirname, "..", "..");
export const MARIADBD = "/usr/sbin/mariadbd";
const INSTALL_DB = "/usr/bin/mariadb-install-db";

/** The account tests hand to the mysql provider: may create users and grant anything. */
export const ADMIN_USER = "bulwark_admin";
export const ADMIN_PASSWORD = "admin-Pa55'\\word";

export interface MariaDb {
  host: "127.0.0.1";
  port: number;
  /** `host:port`, as a PermissionProvider's spec.address. */
  address: string;
  /** root has no password and logs in through the socket (or TCP from 127.0.0.1). */
  socketPath: string;
  rootUser: "root";
  admin: { user: string; password: string };
  dir: string;
  /** Runs SQL as root (through the socket). */
  query<T = unknown>(sql: string, values?: unknown[]): Promise<T>;
  /** Connects as `user` from the source address `from` (127.x.y.z), like a pod with that IP. */
  connectFrom(from: string, user: string, password: string, database?: string): Promise<Connection>;
  /**
   * Whether `user` can log in from `from`: `true`, or the server's error code
   * (ER_HOST_NOT_PRIVILEGED, ER_ACCESS_DENIED_ERROR, ...).
   */
  canLogIn(from: string, user: string, password: string): Promise<true | string>;
  stop(): Promise<void>;
}

/** Installs mariadb-server through hack/system-packages.sh when the server binary is missing. */
export function ensureMariaDb(): void {
  if (existsSync(MARIADBD)) return;
  try {
    execFileSync("bash", [join(ROOT, "hack", "system-packages.sh")], { stdio: "inherit" });
  } catch {
    // It also insists on Go, which these tests do not need: judge by the binary alone.
  }
  if (!existsSync(MARIADBD))
    throw new Error(`${MARIADBD} is still missing after system-packages.sh`);
}

// Small, quick to create, and never refusing a test for too many aborted handshakes.
const SERVER_FLAGS = [
  "--skip-name-resolve",
  "--innodb-buffer-pool-size=32M",
  "--innodb-log-file-size=8M",
  "--performance-schema=OFF",
  "--max-connect-errors=1000000",
  "--skip-log-bin",
];

function install(dir: string, datadir: string, runAsRoot: string[]): void {
  try {
    execFileSync(
      INSTALL_DB,
      [
        "--no-defaults",
        `--datadir=${datadir}`,
        "--auth-root-authentication-method=normal",
        "--skip-test-db",
        ...runAsRoot,
        ...SERVER_FLAGS,
      ],
      { stdio: ["ignore", "pipe", "pipe"], cwd: dir },
    );
  } catch (error) {
    const output = error as { stdout?: Buffer; stderr?: Buffer };
    throw new Error(
      `mariadb-install-db failed: ${output.stderr?.toString() ?? ""}${output.stdout?.toString() ?? ""}`,
    );
  }
}

async function waitForSocket(
  socketPath: string,
  server: ManagedProcess,
  deadline: number,
): Promise<void> {
  let exited: number | string | undefined;
  void server.exited.then(code => (exited = code));
  const accepts = async (): Promise<boolean> => {
    const connection = await createConnection({ socketPath, user: "root" });
    await connection.end();
    return true;
  };
  const outcome = await waitUntil(
    "mariadbd to accept connections",
    async () => (exited !== undefined ? "exited" : (await accepts()) && "accepting"),
    Math.max(0, deadline - Date.now()),
  ).catch((error: Error) => {
    throw new Error(`${error.message}\n${tail(server.logFile)}`);
  });
  if (outcome === "exited") throw new Error(`mariadbd exited (${exited}): ${tail(server.logFile)}`);
}

function tail(file: string): string {
  try {
    return readFileSync(file, "utf8").split("\n").slice(-15).join("\n");
  } catch {
    return "(no log)";
  }
}

/** Starts a fresh MariaDB server; `stop()` kills it and deletes its folder. */
export async function startMariaDb(options: { timeoutMs?: number } = {}): Promise<MariaDb> {
  ensureMariaDb();
  const dir = mkdtempSync(join(tmpdir(), "bulwark-mariadb-"));
  const datadir = join(dir, "data");
  mkdirSync(datadir);
  const runAsRoot = process.getuid?.() === 0 ? ["--user=root"] : [];
  install(dir, datadir, runAsRoot);
  const port = await freePort();
  const socketPath = join(dir, "mysqld.sock");
  const server = startProcess(
    "mariadbd",
    MARIADBD,
    [
      "--no-defaults",
      `--datadir=${datadir}`,
      `--socket=${socketPath}`,
      `--pid-file=${join(dir, "mysqld.pid")}`,
      "--bind-address=127.0.0.1",
      `--port=${port}`,
      ...runAsRoot,
      ...SERVER_FLAGS,
    ],
    { logFile: join(dir, "mariadbd.log"), cwd: dir },
  );
  try {
    await waitForSocket(socketPath, server, Date.now() + (options.timeoutMs ?? 60_000));
  } catch (error) {
    await server.stop(1000);
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }

  const query = async <T>(sql: string, values?: unknown[]): Promise<T> => {
    const connection = await createConnection({ socketPath, user: "root" });
    try {
      const [rows] = await connection.query(sql, values);
      return rows as T;
    } finally {
      await connection.end();
    }
  };
  await query("CREATE USER ?@'127.0.0.1' IDENTIFIED BY ?", [ADMIN_USER, ADMIN_PASSWORD]);
  await query("GRANT ALL PRIVILEGES ON *.* TO ?@'127.0.0.1' WITH GRANT OPTION", [ADMIN_USER]);

  const connectFrom = (from: string, user: string, password: string, database?: string) =>
    createConnection({
      user,
      password,
      database,
      connectTimeout: 5000,
      // mysql2 keeps `localAddress` in its config but never passes it to net.connect: bind the
      // source address ourselves.
      stream: () => connect({ host: "127.0.0.1", port, localAddress: from }),
    });

  return {
    host: "127.0.0.1",
    port,
    address: `127.0.0.1:${port}`,
    socketPath,
    rootUser: "root",
    admin: { user: ADMIN_USER, password: ADMIN_PASSWORD },
    dir,
    query,
    connectFrom,
    async canLogIn(from, user, password) {
      try {
        const connection = await connectFrom(from, user, password);
        await connection.end();
        return true;
      } catch (error) {
        return String((error as { code?: unknown }).code ?? error);
      }
    },
    async stop() {
      await server.stop(5000);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
