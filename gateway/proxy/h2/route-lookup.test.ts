// An HTTP/2 stream the raw-pool path does not take (a route with a bandwidth limit, here) goes on to
// Node's compatibility layer, after the raw path has already looked its route up. A second lookup
// tests the host's path patterns again, so a hostile path would cost a worker twice the per-request
// pattern budget (MAX_MATCH_STEPS per lookup). Each request must test each pattern at most once,
// whichever path serves it. The patterns' matches are counted where they run (RE2JS's test).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { RE2JS } from "re2js";
import { startDataPlane, type DataPlane } from "../../data-plane";
import { ingress, loopbackSlice, view } from "../../routing/testkit";
import { DEFAULT_FRONT_DOOR } from "../request-rules";
import { startBackend, type Backend } from "../testkit";
import { askH2, askHttps } from "./testkit";

const P = "nginx.ingress.kubernetes.io/";
const PROBE = "/item/12345";

describe("HTTP/2 and HTTP/1.1 requests on regex routes test each path pattern once", () => {
  let backend: Backend;
  let plane: DataPlane;
  let tests = 0;
  const original = RE2JS.prototype.test;

  before(async () => {
    backend = await startBackend((_req, res) => res.end("ok"));
    plane = await startDataPlane({
      httpPort: 0,
      httpsPort: 0,
      host: "127.0.0.1",
      frontDoor: { ...DEFAULT_FRONT_DOOR },
    });
    const regexRoute = (name: string, annotations: Record<string, string>) =>
      ingress({
        name,
        annotations: { [`${P}use-regex`]: "true", ...annotations },
        rules: [{ host: `${name}.test`, paths: [{ path: "/item/[0-9]+", service: "main" }] }],
      });
    const applied = await plane.apply({
      ...view(
        1,
        [regexRoute("open", {}), regexRoute("paced", { [`${P}limit-rate`]: "1024" })],
        [loopbackSlice("main", backend.port)],
      ),
    });
    assert.deepEqual(applied.problems, []);
    RE2JS.prototype.test = function (this: RE2JS, input: string): boolean {
      if (input === PROBE) tests++;
      return original.call(this, input);
    };
  });
  after(async () => {
    RE2JS.prototype.test = original;
    await plane.close({ drainMs: 100 });
    await backend.close();
  });

  const cases = [
    ["HTTP/2, a route the raw path takes", "open.test", askH2],
    ["HTTP/2, a route it leaves to Node's path (limit-rate)", "paced.test", askH2],
    ["HTTP/1.1, the same route", "paced.test", askHttps],
  ] as const;
  for (const [what, host, ask] of cases) {
    it(`given ${what}`, async () => {
      tests = 0;
      const answer = await ask(plane.httpsPort!, host, PROBE);
      assert.equal(answer.status, 200, answer.body);
      assert.equal(tests, 1, "the host's one pattern, tested once");
    });
  }
});
