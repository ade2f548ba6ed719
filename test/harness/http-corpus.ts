// A corpus of HTTP/1.x client byte streams for the front door's differential tests
// (gateway/proxy/front-door.differential.test.ts) and the side-by-side run against nginx
// (hack/front-door-vs-nginx.ts): hand-written attacks by category, generated variants of each
// field, and seeded random mutations of valid requests. Every case is plain bytes; what a case
// *should* do is stated only where RFC 9112 leaves no choice ("refuse", "serve").

export interface CorpusCase {
  name: string;
  category: string;
  /** The whole client stream (one or more requests, possibly malformed). */
  bytes: Buffer;
  /** Where the answer is fixed: every request served, or the (first bad) request refused. */
  expect?: "serve" | "refuse";
}

const CRLF = "\r\n";

function request(head: string[], body = ""): string {
  return `${head.join(CRLF)}${CRLF}${CRLF}${body}`;
}

const get = (target = "/", extra: string[] = []) =>
  request([`GET ${target} HTTP/1.1`, "Host: a.test", ...extra]);

const post = (body: string, extra: string[] = [], target = "/submit") =>
  request(
    [`POST ${target} HTTP/1.1`, "Host: a.test", `Content-Length: ${body.length}`, ...extra],
    body,
  );

const chunkedPost = (chunks: string, extra: string[] = [], method = "POST") =>
  request(
    [`${method} /upload HTTP/1.1`, "Host: a.test", "Transfer-Encoding: chunked", ...extra],
    chunks,
  );

const latin1 = (text: string) => Buffer.from(text, "latin1");

/** A deterministic generator (a 31-bit LCG), so every run tests the same corpus. */
export class Seeded {
  constructor(private state: number) {}
  next(): number {
    this.state = (this.state * 1103515245 + 12345) % 2 ** 31;
    return this.state;
  }
  below(n: number): number {
    return this.next() % n;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.below(items.length)]!;
  }
}

/** Valid requests: what every mutation starts from, and cases that must be served as sent. */
export const VALID: [string, string][] = [
  ["a plain GET", get("/")],
  ["a GET with a query", get("/search?q=a+b&x=%20y")],
  ["a GET with headers", get("/a/b", ["Accept: */*", "User-Agent: corpus/1", "Cookie: a=1; b=2"])],
  ["a POST with a length", post("hello=world")],
  ["a PUT with an empty body", request(["PUT /x HTTP/1.1", "Host: a.test", "Content-Length: 0"])],
  ["a chunked POST", chunkedPost("5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")],
  [
    "a chunked POST with an extension and a trailer",
    chunkedPost("3;ext=1\r\nabc\r\n0\r\nX-Sum: 1\r\n\r\n"),
  ],
  ["a chunked GET body", chunkedPost("4\r\nbody\r\n0\r\n\r\n", [], "GET")],
  [
    "a GET with a length body",
    request(["GET /q HTTP/1.1", "Host: a.test", "Content-Length: 4"], "data"),
  ],
  [
    "a DELETE with a body",
    request(["DELETE /r HTTP/1.1", "Host: a.test", "Content-Length: 2"], "ok"),
  ],
  ["two pipelined GETs", get("/one") + get("/two")],
  ["a POST then a GET, pipelined", post("abc") + get("/after")],
  ["Connection: close", get("/", ["Connection: close"])],
  ["an HTTP/1.0 GET", request(["GET /old HTTP/1.0", "Host: a.test"])],
  [
    "Expect: 100-continue",
    request(["PUT /e HTTP/1.1", "Host: a.test", "Expect: 100-continue", "Content-Length: 2"], "hi"),
  ],
  ["obs-text in a value", get("/", ["X-Name: caf\xe9"])],
  ["a tab in a value", get("/", ["X-Tab: a\tb"])],
  ["a Host with a port", request(["GET / HTTP/1.1", "Host: a.test:8080"])],
  ["an IPv6 Host", request(["GET / HTTP/1.1", "Host: [::1]:80"])],
  ["empty lines before the request", `\r\n${get("/lead")}`],
  ["a Connection option naming a header", get("/", ["Connection: x-hop", "X-Hop: 1", "X-Stay: 2"])],
];

const CTLS = [...Array(32).keys(), 127].filter(c => c !== 9);

function byteName(c: number): string {
  return `0x${c.toString(16).padStart(2, "0")}`;
}

type Add = (category: string, name: string, text: string, expect?: "serve" | "refuse") => void;

function lineEndAttacks(add: Add): void {
  // Bare LF: as a line end, inside a value, hiding a second request or a framing header.
  add(
    "bare-lf",
    "a bare LF then a smuggled request",
    `GET / HTTP/1.1\r\nHost: a.test\r\nX-A: 1\n\nGET /smuggled HTTP/1.1\r\nHost: b.test\r\n\r\n`,
    "refuse",
  );
  add(
    "bare-lf",
    "a bare LF hiding Transfer-Encoding",
    `POST / HTTP/1.1\r\nHost: a.test\r\nX-A: 1\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: a.test\r\n\r\n`,
    "refuse",
  );
  add(
    "bare-lf",
    "a bare LF hiding X-Real-IP",
    `GET / HTTP/1.1\r\nHost: a.test\r\nX-A: 1\nX-Real-IP: 10.0.0.1\r\n\r\n`,
    "refuse",
  );
  add("bare-lf", "LF-only line ends", `GET / HTTP/1.1\nHost: a.test\n\n`, "refuse");
  add("bare-lf", "a bare LF ending the head", `GET / HTTP/1.1\r\nHost: a.test\r\n\n`, "refuse");
  add(
    "bare-lf",
    "a bare LF after the request line",
    `GET / HTTP/1.1\nHost: a.test\r\n\r\n`,
    "refuse",
  );
  add(
    "bare-cr",
    "a bare CR in a value",
    `GET / HTTP/1.1\r\nHost: a.test\r\nX-A: 1\rX-B: 2\r\n\r\n`,
    "refuse",
  );
  add(
    "bare-cr",
    "a bare CR ending a line",
    `GET / HTTP/1.1\r\nHost: a.test\rX-B: 2\r\n\r\n`,
    "refuse",
  );
  add(
    "obs-fold",
    "obs-fold with a space",
    `GET / HTTP/1.1\r\nHost: a.test\r\nX-A: 1\r\n 2\r\n\r\n`,
    "refuse",
  );
  add(
    "obs-fold",
    "obs-fold with a tab",
    `GET / HTTP/1.1\r\nHost: a.test\r\nX-A: 1\r\n\t2\r\n\r\n`,
    "refuse",
  );
  add(
    "obs-fold",
    "obs-fold of Transfer-Encoding",
    `POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding:\r\n chunked\r\nContent-Length: 3\r\n\r\nabc`,
    "refuse",
  );
  add(
    "space-before-colon",
    "Transfer-Encoding with a space before the colon",
    `POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding : chunked\r\nContent-Length: 3\r\n\r\nabc`,
    "refuse",
  );
  add(
    "space-before-colon",
    "Host with a tab before the colon",
    `GET / HTTP/1.1\r\nHost\t: a.test\r\n\r\n`,
    "refuse",
  );
  add(
    "space-before-colon",
    "Content-Length with a space before the colon",
    `POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length : 3\r\n\r\nabc`,
    "refuse",
  );
}

function framingAttacks(add: Add): void {
  // Framing.
  const lengths: [string, string, "serve" | "refuse"][] = [
    ["a plus sign", "+3", "refuse"],
    ["a minus sign", "-3", "refuse"],
    ["hex", "0x3", "refuse"],
    ["a trailing NBSP", "3\xa0", "refuse"],
    ["a list", "3, 3", "refuse"],
    ["a list without space", "3,3", "refuse"],
    ["an empty value", "", "refuse"],
    ["a space inside", "3 3", "refuse"],
    ["leading zeros", "003", "serve"],
    ["leading spaces", "   3", "serve"],
    ["a leading tab", "\t3", "refuse"],
    ["trailing OWS", "3 ", "refuse"],
    ["an overflow", "99999999999999999999", "refuse"],
  ];
  for (const [what, value, expect] of lengths) {
    add(
      "content-length",
      `Content-Length with ${what}`,
      `POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: ${value}\r\n\r\nabc`,
      expect,
    );
  }
  add(
    "content-length",
    "two equal Content-Length headers",
    `POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc`,
    "refuse",
  );
  add(
    "content-length",
    "two different Content-Length headers",
    `POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 3\r\nContent-Length: 30\r\n\r\nabcGET /smuggled HTTP/1.1\r\nHost: a.test\r\n\r\n`,
    "refuse",
  );
  const codings: [string, "serve" | "refuse"][] = [
    ["chunked", "serve"],
    ["Chunked", "serve"],
    ["CHUNKED", "serve"],
    ["gzip", "refuse"],
    ["identity", "refuse"],
    ["gzip, chunked", "refuse"],
    ["chunked, gzip", "refuse"],
    ["chunked, chunked", "refuse"],
    ["x-chunked", "refuse"],
    ["chunked;q=1", "refuse"],
    ["\x0bchunked", "refuse"],
    ["chunk", "refuse"],
  ];
  for (const [value, expect] of codings) {
    add(
      "transfer-encoding",
      `Transfer-Encoding: ${JSON.stringify(value)}`,
      `POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: ${value}\r\n\r\n3\r\nabc\r\n0\r\n\r\n`,
      expect,
    );
  }
  add(
    "transfer-encoding",
    "two Transfer-Encoding lines",
    `POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
    "refuse",
  );
  add(
    "transfer-encoding",
    "Transfer-Encoding beside Content-Length",
    `POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: a.test\r\n\r\n`,
    "refuse",
  );
  add(
    "transfer-encoding",
    "Content-Length beside Transfer-Encoding",
    `POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n0\r\n\r\n`,
    "refuse",
  );
  add(
    "transfer-encoding",
    "Transfer-Encoding on HTTP/1.0",
    `POST / HTTP/1.0\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
    "refuse",
  );
  const chunkBodies: [string, string, "serve" | "refuse"][] = [
    ["a bare LF after the size", "3\nabc\r\n0\r\n\r\n", "refuse"],
    ["a bare LF after the data", "3\r\nabc\n0\r\n\r\n", "refuse"],
    ["a size that is not hex", "zz\r\nabc\r\n0\r\n\r\n", "refuse"],
    ["data longer than the size", "3\r\nabcdef\r\n0\r\n\r\n", "refuse"],
    ["a size with 0x", "0x3\r\nabc\r\n0\r\n\r\n", "refuse"],
    ["a negative size", "-3\r\nabc\r\n0\r\n\r\n", "refuse"],
    ["a huge size", "fffffffffffffffff\r\n", "refuse"],
    ["a control character in an extension", "3;a=\x01\r\nabc\r\n0\r\n\r\n", "refuse"],
    ["a bare LF in the trailer", "0\r\nX-T: 1\n\r\n", "refuse"],
    ["upper-case hex", "A\r\n0123456789\r\n0\r\n\r\n", "serve"],
    ["a quoted extension", '3;name="va lue"\r\nabc\r\n0\r\n\r\n', "serve"],
    [
      "a smuggled request after the last chunk",
      "0\r\n\r\nGET /second HTTP/1.1\r\nHost: a.test\r\n\r\n",
      "serve",
    ],
  ];
  for (const [what, body, expect] of chunkBodies) {
    add("chunked-body", `a chunked body with ${what}`, chunkedPost(body), expect);
  }
}

function byteAttacks(add: Add): void {
  // Controls and invalid bytes, one case per byte.
  for (const c of CTLS) {
    add(
      "ctl-in-value",
      `${byteName(c)} in a value`,
      `GET / HTTP/1.1\r\nHost: a.test\r\nX-A: a${String.fromCharCode(c)}b\r\n\r\n`,
      "refuse",
    );
  }
  for (let c = 0; c < 256; c += c < 48 || (c > 57 && c < 65) || c > 122 ? 1 : 13) {
    const char = String.fromCharCode(c);
    add(
      "name-byte",
      `${byteName(c)} in a field name`,
      `GET / HTTP/1.1\r\nHost: a.test\r\nX-${char}A: 1\r\n\r\n`,
    );
  }
  for (let c = 0; c < 256; c += c < 128 ? 1 : 17) {
    const char = String.fromCharCode(c);
    add(
      "target-byte",
      `${byteName(c)} in the path`,
      `GET /a${char}b HTTP/1.1\r\nHost: a.test\r\n\r\n`,
    );
    if (c > 32)
      add(
        "query-byte",
        `${byteName(c)} in the query`,
        `GET /a?x=${char} HTTP/1.1\r\nHost: a.test\r\n\r\n`,
      );
  }
}

function hostAttacks(add: Add): void {
  // Host.
  const hosts: [string, string | undefined, "serve" | "refuse"][] = [
    ["missing", undefined, "refuse"],
    ["empty", "", "refuse"],
    ["userinfo and port", "a.test:80@evil.com", "refuse"],
    ["userinfo", "user@a.test", "refuse"],
    ["a space", "a test", "refuse"],
    ["a path", "a.test/x", "refuse"],
    ["a port that is not a number", "a.test:http", "refuse"],
    ["a six-digit port", "a.test:123456", "refuse"],
    ["an unclosed IPv6 literal", "[::1", "refuse"],
    ["a trailing dot", "a.test.", "serve"],
    ["an IPv4 address", "10.1.2.3:8080", "serve"],
    ["upper case", "A.TEST", "serve"],
    ["an underscore", "my_host.test", "serve"],
  ];
  for (const [what, host, expect] of hosts) {
    const line = host === undefined ? [] : [`Host: ${host}`];
    add("host", `Host ${what}`, request(["GET / HTTP/1.1", ...line]), expect);
  }
  add(
    "host",
    "two Host headers",
    request(["GET / HTTP/1.1", "Host: a.test", "Host: b.test"]),
    "refuse",
  );
  add(
    "host",
    "two equal Host headers",
    request(["GET / HTTP/1.1", "Host: a.test", "Host: a.test"]),
    "refuse",
  );
  add("host", "HTTP/1.0 without Host", request(["GET / HTTP/1.0"]), "serve");
}

function targetAttacks(add: Add): void {
  // Targets: absolute-form, normalization, and forms the gateway does not serve.
  const targets: [string, string, "serve" | "refuse"][] = [
    ["absolute-form", "http://internal.example/admin", "serve"],
    ["absolute-form with a query", "http://internal.example?x=1", "serve"],
    ["absolute-form https", "https://internal.example:8443/x", "serve"],
    ["absolute-form with userinfo", "http://a.test@internal.example/", "refuse"],
    ["absolute-form of another scheme", "ftp://internal.example/", "refuse"],
    ["asterisk-form", "*", "refuse"],
    ["authority-form", "internal.example:443", "refuse"],
    ["dot segments", "/public/../admin", "serve"],
    ["encoded dot segments", "/public/%2e%2e/admin", "serve"],
    ["mixed-case encoded dots", "/public/%2E./admin", "serve"],
    ["a single dot", "/public/./x", "serve"],
    ["merged slashes", "//public//x", "serve"],
    ["a climb above the root", "/../etc/passwd", "refuse"],
    ["an encoded climb above the root", "/%2e%2e/etc", "refuse"],
    ["an encoded slash", "/a%2fb", "refuse"],
    ["an encoded backslash", "/a%5cb", "refuse"],
    ["an encoded NUL", "/a%00b", "refuse"],
    ["a raw backslash", "/a\\..\\b", "refuse"],
    ["a bad escape", "/a%zzb", "refuse"],
    ["a truncated escape", "/a%2", "refuse"],
    ["encoded unreserved characters", "/%7Euser/%41bc", "serve"],
    ["an encoded space", "/a%20b", "serve"],
    ["dots in the query only", "/x?path=/../../etc", "serve"],
    ["a fragment", "/x#frag", "refuse"],
    ["a 9000-byte target", `/${"a".repeat(9000)}`, "refuse"],
  ];
  for (const [what, target, expect] of targets) {
    add(
      "target",
      `a target with ${what}`,
      request([`GET ${target} HTTP/1.1`, "Host: a.test"]),
      expect,
    );
  }
}

function requestLineAttacks(add: Add): void {
  // Request line and version.
  const lines: [string, string, "serve" | "refuse"][] = [
    ["HTTP/1.2", "GET / HTTP/1.2", "refuse"],
    ["HTTP/2.0", "GET / HTTP/2.0", "refuse"],
    ["HTTP/0.9", "GET / HTTP/0.9", "refuse"],
    ["a lower-case version", "GET / http/1.1", "refuse"],
    ["no version", "GET /", "refuse"],
    ["two spaces", "GET  / HTTP/1.1", "refuse"],
    ["a tab separator", "GET\t/ HTTP/1.1", "refuse"],
    ["a trailing space", "GET / HTTP/1.1 ", "refuse"],
    ["a lower-case method", "get / HTTP/1.1", "refuse"],
    ["a method llhttp knows", "PURGE / HTTP/1.1", "serve"],
    ["a method llhttp does not know", "BREW / HTTP/1.1", "refuse"],
    ["a method with a slash", "G/T / HTTP/1.1", "refuse"],
  ];
  for (const [what, line, expect] of lines) {
    add("request-line", `a request line with ${what}`, request([line, "Host: a.test"]), expect);
  }
}

function hopAttacks(add: Add): void {
  // Connection options and hop-by-hop headers.
  for (const listed of [
    "Host",
    "Content-Length",
    "Transfer-Encoding",
    "X-Forwarded-For",
    "X-Real-IP",
    "X-Forwarded-Host",
  ]) {
    add(
      "connection",
      `Connection naming ${listed}`,
      request(
        [
          "POST / HTTP/1.1",
          "Host: a.test",
          `Connection: ${listed}`,
          "Content-Length: 3",
          "X-Forwarded-For: 9.9.9.9",
        ],
        "abc",
      ),
      "serve",
    );
  }
  add("underscore", "an underscore name", get("/", ["X_Real_IP: 10.0.0.1", "X-Ok: 1"]), "serve");
  add(
    "underscore",
    "an underscore Content_Length",
    request(["POST / HTTP/1.1", "Host: a.test", "Content_Length: 3", "Content-Length: 3"], "abc"),
    "serve",
  );
}

function sizeAttacks(add: Add): void {
  // Size: a head over the limit, many headers, a long value.
  add(
    "size",
    "3000 headers",
    request([
      "GET / HTTP/1.1",
      "Host: a.test",
      ...Array.from({ length: 3000 }, (_, i) => `X-H${i}: ${"v".repeat(20)}`),
    ]),
    "refuse",
  );
  add("size", "a 100 KB value", get("/", [`X-Big: ${"b".repeat(100_000)}`]), "refuse");
  add("size", "a 10 KB value", get("/", [`X-Big: ${"b".repeat(10_000)}`]), "serve");
  add("size", "a 20 KB value", get("/", [`X-Big: ${"b".repeat(20_000)}`]), "refuse");
  add(
    "early-answer",
    "a body after a request the gateway answers itself",
    request(
      ["POST /too-large HTTP/1.1", "Host: a.test", "Content-Length: 38"],
      "GET /smuggled HTTP/1.1\r\nHost: a.test\r\n\r\n",
    ),
  );
}

/** The attacks the front-door issue lists, and their close variants. */
function attacks(): CorpusCase[] {
  const cases: CorpusCase[] = [];
  const add: Add = (category, name, text, expect) =>
    cases.push({ category, name, bytes: latin1(text), expect });
  lineEndAttacks(add);
  framingAttacks(add);
  byteAttacks(add);
  hostAttacks(add);
  targetAttacks(add);
  requestLineAttacks(add);
  hopAttacks(add);
  sizeAttacks(add);
  return cases;
}

/** A few edits of bytes that parsers disagree on, at random places of a valid request. */
function mutate(text: string, random: Seeded): string {
  const specials = [
    "\r",
    "\n",
    "\r\n",
    " ",
    "\t",
    ":",
    "\x00",
    "\x7f",
    "\xff",
    ",",
    "\x0b",
    "\r\n ",
    "\r\n\r\n",
    "Transfer-Encoding: chunked\r\n",
    "Content-Length: 5\r\n",
    "Host: b.test\r\n",
  ];
  let out = text;
  const edits = 1 + random.below(3);
  for (let e = 0; e < edits; e++) {
    const at = random.below(out.length + 1);
    switch (random.below(4)) {
      case 0:
        out = out.slice(0, at) + random.pick(specials) + out.slice(at);
        break;
      case 1:
        out = out.slice(0, at) + out.slice(at + 1 + random.below(3));
        break;
      case 2: {
        // Duplicate a line.
        const lines = out.split("\r\n");
        const i = random.below(lines.length);
        lines.splice(i, 0, lines[i]!);
        out = lines.join("\r\n");
        break;
      }
      default:
        out = out.slice(0, at) + random.pick(specials) + out.slice(at + 1);
    }
  }
  return out;
}

/** The whole corpus: the valid requests, the attacks, then `mutations` seeded mutations. */
export function httpCorpus(mutations = 400, seed = 20261203): CorpusCase[] {
  const cases: CorpusCase[] = VALID.map(([name, text]) => ({
    category: "valid",
    name,
    bytes: latin1(text),
    expect: "serve" as const,
  }));
  cases.push(...attacks());
  const random = new Seeded(seed);
  for (let i = 0; i < mutations; i++) {
    const [name, text] = random.pick(VALID);
    cases.push({
      category: "mutation",
      name: `mutation ${i} of ${name}`,
      bytes: latin1(mutate(text, random)),
    });
  }
  return cases;
}
