// Sending a signed row to a peer (I/O): PUT http://<peer ip>:<port>/result, from this node's own
// address, over a keep-alive connection, with a deadline.
import http from "node:http";
import type { Member } from "./membership";
import type { SignedResult } from "./signing";

export interface Sender {
  send(to: Member, message: SignedResult): Promise<void>;
  close(): void;
}

export function makeSender(options: {
  port: number;
  timeoutMs: number;
  localAddress: () => string | undefined;
  /** A keep-alive agent, shared with the daemon check (checks.ts). */
  agent: http.Agent;
}): Sender {
  const { agent } = options;
  return {
    send(to, message) {
      const body = JSON.stringify(message);
      return new Promise((resolve, reject) => {
        const req = http.request(
          {
            host: to.ip,
            port: options.port,
            path: "/result",
            method: "PUT",
            agent,
            localAddress: options.localAddress(),
            signal: AbortSignal.timeout(options.timeoutMs),
            headers: {
              "content-type": "application/json",
              "content-length": Buffer.byteLength(body),
            },
          },
          res => {
            res.resume();
            if (res.statusCode === 200) resolve();
            else reject(new Error(`${to.name}: HTTP ${res.statusCode}`));
          },
        );
        req.on("error", reject);
        req.end(body);
      });
    },
    close: () => agent.destroy(),
  };
}
