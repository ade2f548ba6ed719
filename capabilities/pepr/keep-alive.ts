// The API server keeps an idle connection to a webhook for 90 s (Go's http.DefaultTransport
// IdleConnTimeout, which apimachinery's transport defaults take); Node's server closes one after
// 5 s. A call the API server writes just as Node closes the connection is reset, Go does not
// retry a POST, and with failurePolicy Fail the write is refused: "failed calling webhook …
// connection reset by peer" (seen seeding 10 000 Ingresses, hack/bench/admission.ts). Pepr makes
// its HTTPS server itself, so the servers this process creates get an idle timeout longer than
// the client's: the API server always closes first, and never writes on a closing connection.
import type { Server } from "node:https";

/** Past the API server's 90 s, with room for a slow close. */
export const IDLE_TIMEOUT_MS = 120_000;

interface HttpsModule {
  createServer: (...args: never[]) => Server;
}

/** Every server `https.createServer` makes from now on keeps idle connections `idleMs`. */
export function outlastClientIdle(https: HttpsModule, idleMs = IDLE_TIMEOUT_MS): void {
  const create = https.createServer;
  https.createServer = (...args: never[]): Server => {
    const server = create(...args);
    server.keepAliveTimeout = idleMs;
    return server;
  };
}
