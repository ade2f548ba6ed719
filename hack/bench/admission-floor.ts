// The floor of admission.ts's webhook calls: an HTTPS server that parses an AdmissionReview and
// allows it, nothing else. On /validate it only allows; on /mutate it also returns a fixed JSON
// patch (Bulwark's own answer for the measured pod, captured by the bench), so a webhook
// registered like Bulwark's and pointed here costs the API server what Bulwark's does, minus
// Bulwark's own work. It runs in a process of its own, as Pepr's admission server does, so both
// sides of the comparison pay the same hop between processes (on a loaded machine, the scheduler's
// wake-up is part of every call's time). Prints "listening <port>" when ready.
// With a review file, the first review posted to /mutate is written there (what the API server
// really sends, for the bench's direct posts).
//   npx tsx hack/bench/admission-floor.ts <key file> <certificate file> [<patch file> [<review file>]]
import { readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";

const [keyFile, certFile, patchFile, reviewFile] = process.argv.slice(2);
if (keyFile === undefined || certFile === undefined) {
  throw new Error(
    "usage: admission-floor.ts <key file> <certificate file> [<patch file> [<review file>]]",
  );
}
// The patch as the API server takes it: base64 of a JSON Patch document.
const patch = patchFile === undefined ? undefined : readFileSync(patchFile).toString("base64");
let kept = false;
const server = createServer(
  { key: readFileSync(keyFile), cert: readFileSync(certFile) },
  (req, res) => {
    let text = "";
    req.setEncoding("utf8");
    req.on("data", chunk => (text += chunk));
    req.on("end", () => {
      const { request: review } = JSON.parse(text) as { request: { uid: string } };
      const mutating = req.url?.split("?")[0] === "/mutate";
      if (mutating && !kept && reviewFile !== undefined) writeFileSync(reviewFile, text);
      kept ||= mutating;
      const mutation = mutating && patch !== undefined ? { patchType: "JSONPatch", patch } : {};
      res.setHeader("content-type", "application/json");
      res.end(
        JSON.stringify({
          apiVersion: "admission.k8s.io/v1",
          kind: "AdmissionReview",
          response: { uid: review.uid, allowed: true, ...mutation },
        }),
      );
    });
  },
);
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
});
process.once("SIGTERM", () => server.close(() => process.exit(0)));
