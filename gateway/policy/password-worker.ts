// The password verifier's worker thread: checks one password against one stored hash at a time,
// off the gateway's event loop (bcrypt at cost 12 takes a quarter of a second in JavaScript).
import { parentPort } from "node:worker_threads";
import { passwordMatches } from "./htpasswd";

export interface VerifyRequest {
  id: number;
  password: Uint8Array;
  stored: string;
}

export interface VerifyReply {
  id: number;
  match: boolean;
}

parentPort?.on("message", (request: VerifyRequest) => {
  const match = passwordMatches(Buffer.from(request.password), request.stored);
  const reply: VerifyReply = { id: request.id, match };
  parentPort?.postMessage(reply);
});
