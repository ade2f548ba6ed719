// The floor of admission.ts's direct posts: an HTTPS server that parses an AdmissionReview and
// allows it, nothing else. It runs in a process of its own, as Pepr's admission server does, so
// both sides of the comparison pay the same hop between processes (on a loaded machine, the
// scheduler's wake-up is part of every call's time). Prints "listening <port>" when ready.
//   npx tsx hack/bench/admission-floor.ts <key file> <certificate file>
import { readFileSync } from "node:fs";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";

const [keyFile, certFile] = process.argv.slice(2);
if (keyFile === undefined || certFile === undefined) {
  throw new Error("usage: admission-floor.ts <key file> <certificate file>");
}
const server = createServer(
  { key: readFileSync(keyFile), cert: readFileSync(certFile) },
  (req, res) => {
    let text = "";
    req.setEncoding("utf8");
    req.on("data", chunk => (text += chunk));
    req.on("end", () => {
      const { request: review } = JSON.parse(text) as { request: { uid: string } };
      res.setHeader("content-type", "application/json");
      res.end(
        JSON.stringify({
          apiVersion: "admission.k8s.io/v1",
          kind: "AdmissionReview",
          response: { uid: review.uid, allowed: true },
        }),
      );
    });
  },
);
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
});
process.once("SIGTERM", () => server.close(() => process.exit(0)));
