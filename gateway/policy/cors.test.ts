import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseCors } from "../../core/annotations/cors";
import { answerCors, originAllowed } from "./cors";

const P = "nginx.ingress.kubernetes.io/";
function cors(annotations: Record<string, string>) {
  const parsed = parseCors(
    Object.fromEntries(
      Object.entries({ "enable-cors": "true", ...annotations }).map(([k, v]) => [P + k, v]),
    ),
  );
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  return parsed.value;
}
const header = (answer: ReturnType<typeof answerCors>, name: string) =>
  answer.kind === "none" ? undefined : answer.headers.find(([n]) => n === name)?.[1];

describe("originAllowed", () => {
  const cases: [string, string, boolean][] = [
    ["https://a.example.com", "https://a.example.com", true],
    ["https://a.example.com", "HTTPS://A.EXAMPLE.COM", true],
    ["https://a.example.com", "http://a.example.com", false],
    ["https://a.example.com", "https://a.example.com:8443", false],
    ["https://*.example.com", "https://shop.example.com", true],
    ["https://*.example.com", "https://a.b.example.com", false],
    ["https://*.example.com", "https://example.com", false],
    ["https://*.example.com", "https://evilexample.com", false],
    ["https://*.example.com:8443", "https://x.example.com:8443", true],
    ["https://*.example.com:8443", "https://x.example.com", false],
  ];
  for (const [allowed, origin, expected] of cases) {
    it(`${allowed} ${expected ? "allows" : "refuses"} ${origin}`, () =>
      assert.equal(originAllowed(allowed, origin), expected));
  }
});

describe("answerCors", () => {
  const two = cors({ "cors-allow-origin": "https://a.com, https://b.com" });
  it("echoes the matching origin, never the whole list, and varies on Origin", () => {
    const answer = answerCors(two, "GET", "https://b.com");
    assert.equal(answer.kind, "response");
    assert.equal(header(answer, "access-control-allow-origin"), "https://b.com");
    assert.equal(header(answer, "vary"), "Origin");
    assert.equal(header(answer, "access-control-allow-credentials"), "true");
  });
  it("a disallowed origin gets no CORS headers and its OPTIONS reaches the backend", () => {
    assert.deepEqual(answerCors(two, "GET", "https://c.com"), { kind: "none" });
    assert.deepEqual(answerCors(two, "OPTIONS", "https://c.com"), { kind: "none" });
    assert.deepEqual(answerCors(two, "GET", undefined), { kind: "none" });
  });
  it("a preflight from an allowed origin is answered with methods, headers and max-age", () => {
    const answer = answerCors(two, "OPTIONS", "https://a.com");
    assert.equal(answer.kind, "preflight");
    assert.equal(
      header(answer, "access-control-allow-methods"),
      "GET, PUT, POST, DELETE, PATCH, OPTIONS",
    );
    assert.match(
      header(answer, "access-control-allow-headers") ?? "",
      /^DNT, Keep-Alive, .*Authorization$/,
    );
    assert.equal(header(answer, "access-control-max-age"), "1728000");
  });
  it("the default origin * answers * to everyone, without Vary", () => {
    const any = cors({});
    const answer = answerCors(any, "GET", "https://whoever.net");
    assert.equal(header(answer, "access-control-allow-origin"), "*");
    assert.equal(header(answer, "vary"), undefined);
  });
  it("configured methods, headers, credentials, max-age and expose headers", () => {
    const custom = cors({
      "cors-allow-origin": "https://a.com",
      "cors-allow-methods": "GET, POST",
      "cors-allow-headers": "X-Token",
      "cors-allow-credentials": "false",
      "cors-max-age": "60",
      "cors-expose-headers": "X-Trace-Id",
    });
    const preflight = answerCors(custom, "OPTIONS", "https://a.com");
    assert.equal(header(preflight, "access-control-allow-methods"), "GET, POST");
    assert.equal(header(preflight, "access-control-allow-headers"), "X-Token");
    assert.equal(header(preflight, "access-control-max-age"), "60");
    assert.equal(header(preflight, "access-control-allow-credentials"), undefined);
    assert.equal(
      header(answerCors(custom, "GET", "https://a.com"), "access-control-expose-headers"),
      "X-Trace-Id",
    );
  });
  it("CORS off answers nothing", () => {
    assert.deepEqual(answerCors(undefined, "OPTIONS", "https://a.com"), { kind: "none" });
    assert.deepEqual(answerCors(cors({ "enable-cors": "false" }), "GET", "https://a.com"), {
      kind: "none",
    });
  });
});
