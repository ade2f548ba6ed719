// Debian's nginx as a peer measured in the same run (benchmarks, the front-door comparison):
// a config with its files under one folder, started in the foreground, stopped gracefully.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const NGINX = "/usr/sbin/nginx";

/** Installs Debian's nginx through hack/system-packages.sh when it is missing. */
export function ensureNginx(): void {
  if (existsSync(NGINX)) return;
  try {
    execFileSync("bash", [join(__dirname, "system-packages.sh")], { stdio: "inherit" });
  } catch {
    // It also insists on Go, which nginx does not need: judge by the binary alone.
  }
  if (!existsSync(NGINX)) throw new Error(`${NGINX} is still missing after system-packages.sh`);
}

const TEMP_PATHS = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"];

/** A whole nginx.conf whose pid, logs and temp files live in `dir`; `http` goes in the http block. */
export function nginxConfig(dir: string, workers: number, http: string): string {
  const temps = TEMP_PATHS.map(name => `${name}_temp_path ${dir}/${name};`).join(" ");
  return `worker_processes ${workers};
daemon off;
pid ${dir}/nginx-${Math.random().toString(36).slice(2)}.pid;
error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  ${temps}
  ${http}
}
`;
}

/** Starts nginx on a config written to `dir/<name>.conf`; fails if it exits at once. */
export async function startNginx(dir: string, name: string, config: string): Promise<ChildProcess> {
  const file = join(dir, `${name}.conf`);
  writeFileSync(file, config);
  const child = spawn(NGINX, ["-c", file, "-p", dir, "-e", join(dir, "error.log")], {
    stdio: "ignore",
  });
  await new Promise(resolve => setTimeout(resolve, 500));
  if (child.exitCode !== null) throw new Error(`nginx (${name}) exited; see ${dir}/error.log`);
  return child;
}

/** Graceful shutdown (SIGQUIT), resolved once it has exited. */
export async function stopNginx(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise(resolve => child.once("exit", resolve));
  child.kill("SIGQUIT");
  await exited;
}
