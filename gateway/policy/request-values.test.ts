import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  cookieValue,
  headerInLines,
  HeadLinesFacts,
  NodeHeadersFacts,
  queryValue,
} from "./request-values";

describe("headerInLines", () => {
  const lines =
    "Host: a.test\r\nX-Canary: always\r\nX-Tier: gold\r\nCookie: a=1; b=2\r\nX-Canary-Long: no\r\nX-Tier: silver\r\n";
  const cases: [string, string, string | undefined][] = [
    ["a header in any case", "x-canary", "always"],
    ["a name that is the prefix of another", "x-canary-long", "no"],
    ["the Host line", "host", "a.test"],
    ["an absent header", "x-other", undefined],
    ["a header sent twice, joined as Node joins it", "x-tier", "gold, silver"],
  ];
  for (const [label, name, expected] of cases) {
    it(`given ${label}, returns ${String(expected)}`, () => {
      assert.equal(headerInLines(lines, name), expected);
    });
  }
});

describe("headerInLines, generated", () => {
  // Token characters, with the ones just before and after A-Z and a-z in ASCII, where a careless
  // case fold would confuse them (@ [ ` {, and ^ _ | ~ among tchar).
  const CHARS = "aAzZmM09-_^`|~!#$%&'*+.";
  const pick = (random: () => number, text: string) => text[Math.floor(random() * text.length)]!;

  it("finds what a lower-casing reference finds, over 2000 random heads", () => {
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const name = () =>
      Array.from({ length: 1 + Math.floor(random() * 4) }, () => pick(random, CHARS)).join("");
    for (let i = 0; i < 2000; i++) {
      const pairs = Array.from({ length: 1 + Math.floor(random() * 6) }, () => [name(), name()]);
      const lines = pairs.map(([n, v]) => `${n}: ${v}\r\n`).join("");
      const wanted = name().toLowerCase();
      const values = pairs.filter(([n]) => n!.toLowerCase() === wanted).map(([, v]) => v);
      const expected = values.length === 0 ? undefined : values.join(", ");
      assert.equal(headerInLines(lines, wanted), expected, `${JSON.stringify(lines)} ${wanted}`);
    }
  });
});

describe("cookieValue and queryValue", () => {
  it("finds a cookie among several, trimmed; undefined when absent or no header", () => {
    assert.equal(cookieValue("a=1; canary=always;b=2", "canary"), "always");
    assert.equal(cookieValue("a=1", "canary"), undefined);
    assert.equal(cookieValue(undefined, "canary"), undefined);
  });
  it("finds a query parameter, percent-decoded, the first of several; empty for a bare name", () => {
    assert.equal(queryValue("/p?x=1&user=a%20b&user=c", "user"), "a b");
    assert.equal(queryValue("/p?flag&x=1", "flag"), "");
    assert.equal(queryValue("/p", "user"), undefined);
    assert.equal(queryValue("/p?user=%zz", "user"), "%zz");
  });
});

describe("request facts", () => {
  it("given a header and Cookie sent twice, both paths see every line (Node's own parse)", async () => {
    const { createServer } = await import("node:http");
    const { connect } = await import("node:net");
    const raw =
      "Host: a.test\r\nX-Tier: gold\r\nCookie: a=1\r\nX-Tier: silver\r\nCookie: canary=always\r\n";
    const parsed = await new Promise<import("node:http").IncomingHttpHeaders>(resolve => {
      const server = createServer((req, res) => {
        resolve(req.headers);
        res.end();
        server.close();
      });
      server.listen(0, "127.0.0.1", () => {
        const address = server.address() as { port: number };
        const socket = connect(address.port, "127.0.0.1", () =>
          socket.end(`GET / HTTP/1.1\r\n${raw}Connection: close\r\n\r\n`),
        );
        socket.resume();
      });
    });
    const fast = new HeadLinesFacts(
      { method: "GET", target: "/", host: "a.test", lines: raw },
      false,
    );
    const node = new NodeHeadersFacts("GET", "/", parsed, false);
    for (const facts of [fast, node]) {
      assert.deepEqual(
        [facts.header("x-tier"), facts.cookie("a"), facts.cookie("canary")],
        ["gold, silver", "1", "always"],
      );
    }
  });

  it("the fast path's head text and Node's headers give the same answers", () => {
    const head = {
      method: "GET",
      target: "/a?q=v",
      host: "a.test",
      lines: "Host: a.test\r\nX-Tier: gold\r\nCookie: c=1\r\n",
    };
    const fast = new HeadLinesFacts(head, false);
    const node = new NodeHeadersFacts(
      "GET",
      "/a?q=v",
      { host: "a.test", "x-tier": "gold", cookie: "c=1" },
      false,
    );
    for (const facts of [fast, node]) {
      assert.deepEqual(
        [facts.host, facts.header("x-tier"), facts.cookie("c"), facts.query("q"), facts.https],
        ["a.test", "gold", "1", "v", false],
      );
    }
  });
});
