// HTTPS for the permission server from a certificate and key on disk, reloaded when they change:
// a mounted Secret (cert-manager renewing it, `bulwark permission tls` replacing it) changes under
// the running process, and a restart to pick it up would drop every long-poll.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Server as HttpsServer } from "node:https";
import { createSecureContext } from "node:tls";
import { errorText, type Logger } from "../../kube/log";

export interface TlsPaths {
  certPath: string;
  keyPath: string;
}

export interface TlsPair {
  cert: Buffer;
  key: Buffer;
  /** Identifies the pair's content, to tell whether a re-read changed anything. */
  digest: string;
}

/** Reads and checks the pair; the error names the setting whose file is wrong. */
export function readTlsPair(paths: TlsPaths, read = readFileSync): TlsPair {
  const file = (setting: string, path: string): Buffer => {
    try {
      return read(path);
    } catch (error) {
      throw new Error(`${setting}: cannot read ${path}: ${errorText(error)}`);
    }
  };
  const cert = file("BULWARK_TLS_CERT_PATH", paths.certPath);
  const key = file("BULWARK_TLS_KEY_PATH", paths.keyPath);
  try {
    // Throws on a bad PEM or a key that does not match the certificate.
    createSecureContext({ cert, key });
  } catch (error) {
    throw new Error(
      `BULWARK_TLS_CERT_PATH/BULWARK_TLS_KEY_PATH: ${paths.certPath} and ${paths.keyPath} are not a matching PEM certificate and key: ${errorText(error)}`,
    );
  }
  const digest = createHash("sha256").update(cert).update("\0").update(key).digest("hex");
  return { cert, key, digest };
}

/**
 * Re-reads the pair every `intervalMs` and swaps it into `server` when its content changed.
 * Polling, not fs.watch: kubelet updates a Secret volume by swapping a `..data` symlink, which a
 * watch on the file's old inode never sees. A half-written or mismatched pair (the key and the
 * certificate land as two files) keeps the previous one serving until the next read.
 */
export function reloadTlsOnChange(
  server: HttpsServer,
  paths: TlsPaths,
  options: { intervalMs: number; current: TlsPair; log: Logger },
): () => void {
  let current = options.current;
  let failing = "";
  const timer = setInterval(() => {
    let next: TlsPair;
    try {
      next = readTlsPair(paths);
    } catch (error) {
      const why = errorText(error);
      // Once per distinct problem: a missing file would otherwise log every interval.
      if (why !== failing)
        options.log.warn("TLS files unusable; still serving the previous certificate", {
          err: why,
        });
      failing = why;
      return;
    }
    failing = "";
    if (next.digest === current.digest) return;
    server.setSecureContext({ cert: next.cert, key: next.key });
    current = next;
    options.log.info("TLS certificate reloaded", { cert: paths.certPath });
  }, options.intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
