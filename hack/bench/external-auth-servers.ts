// The backend and the auth server of hack/bench/external-auth.ts, in a process of their own so
// they do not share the measured proxy's CPU thread; prints their ports as one JSON line.
import { namedBackend } from "../../gateway/proxy/testkit";
import { startOAuth2StandIn } from "../../test/harness/oauth2-stand-in";

async function main(): Promise<void> {
  const backend = await namedBackend("main");
  const auth = await startOAuth2StandIn();
  auth.addSession("bench-token", { user: "bench", email: "bench@example.com", groups: [] });
  process.stdout.write(`${JSON.stringify({ backend: backend.port, auth: auth.port })}\n`);
  process.on("SIGTERM", () => process.exit(0));
}

void main();
