// The front door against a parser nobody here wrote: each case of the corpus (test/harness/
// http-corpus.ts: attacks by category, generated field variants, seeded mutations of valid
// requests) is sent as raw bytes through the data plane to a backend that records what it gets,
// and Node's own llhttp parses both the client's bytes and the backend's. For each case, either
// the gateway refuses (an answer of its own, then the connection closed) or the backend's parse is
// exactly the strict parse of what the client sent, request by request, as the gateway forwards it
// (hop-by-hop fields removed, the path normalized, Host the routed authority) — and the client
// gets one answer per request it sent. Where the gateway is stricter than llhttp, the backend sees
// a prefix of the requests; never one more, never a different one.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { httpCorpus, type CorpusCase } from "../../test/harness/http-corpus";
import {
  LlhttpRecorder,
  readResponses,
  sendRaw,
  type ParsedRequest,
  type ParsedStream,
} from "../../test/harness/llhttp-recorder";
import { CasePlane } from "../../test/harness/case-plane";
import {
  DEFAULT_FRONT_DOOR,
  isRefusal,
  isValidHost,
  parseTarget,
  PROTECTED_FROM_CONNECTION,
} from "./request-rules";

/** Fields the gateway sets or removes itself: compared on their own, not as forwarded fields. */
const OWN_FIELDS = new Set([
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "te",
  "trailer",
  "upgrade",
  "proxy-connection",
  "x-forwarded-for",
  "x-forwarded-host",
  "x-forwarded-port",
  "x-forwarded-proto",
  "x-real-ip",
  "x-request-id",
]);

/** The gateway's own answers to a request it refuses; nothing follows them on the connection. */
const REFUSALS = new Set([400, 408, 413, 414, 431, 501, 505]);
/** Own answers that are not refusals: Node's 417 to an Expect it does not know. */
const OWN_ANSWERS = new Set([417]);

function connectionListed(fields: [string, string][]): Set<string> {
  const listed = new Set<string>();
  for (const [name, value] of fields) {
    if (name.toLowerCase() !== "connection") continue;
    for (const token of value.split(",")) {
      const t = token.trim().toLowerCase();
      if (t !== "" && !PROTECTED_FROM_CONNECTION.has(t)) listed.add(t);
    }
  }
  return listed;
}

/** The fields a request carries onward: the client's, minus those the gateway owns or drops. */
function forwardedFields(fields: [string, string][], listed = new Set<string>()): string[] {
  return fields
    .filter(([name]) => {
      const lower = name.toLowerCase();
      return !OWN_FIELDS.has(lower) && !lower.includes("_") && !listed.has(lower);
    })
    .map(([name, value]) => `${name.toLowerCase()}: ${value}`);
}

const field = (request: ParsedRequest, name: string) =>
  request.fields.find(([n]) => n.toLowerCase() === name)?.[1];

/** Why `got` (what the backend parsed) is not `sent` (llhttp's parse of the client's bytes) as forwarded. */
function difference(sent: ParsedRequest, got: ParsedRequest): string | undefined {
  const target = parseTarget(sent.target);
  if (isRefusal(target)) return `forwarded ${sent.target}, which the front door refuses`;
  const expected = {
    method: sent.method,
    target: target.target,
    host: target.authority ?? field(sent, "host"),
    fields: forwardedFields(sent.fields, connectionListed(sent.fields)),
    body: sent.body.toString("latin1"),
  };
  const actual = {
    method: got.method,
    target: got.target,
    host: field(got, "host"),
    fields: forwardedFields(got.fields),
    body: got.body.toString("latin1"),
  };
  try {
    assert.deepEqual(actual, expected);
  } catch (error) {
    return (error as Error).message;
  }
  if (field(got, "x-forwarded-for")?.endsWith("127.0.0.1") !== true) {
    return "X-Forwarded-For does not end with the client";
  }
  return requestIdDifference(sent, got);
}

/** One X-Request-ID goes upstream: the client's (its lines joined) when not empty, else a new one. */
function requestIdDifference(sent: ParsedRequest, got: ParsedRequest): string | undefined {
  const ids = got.fields.filter(([name]) => name.toLowerCase() === "x-request-id");
  const own = sent.fields
    .filter(([name]) => name.toLowerCase() === "x-request-id")
    .map(([, value]) => value)
    .join(", ");
  const id = ids[0]?.[1] ?? "";
  const expected = own === "" ? /^[0-9a-f]{32}$/.test(id) : id === own;
  return ids.length === 1 && expected ? undefined : `X-Request-ID ${JSON.stringify(ids)}`;
}

interface Outcome {
  case: CorpusCase;
  reference: ParsedStream;
  forwarded: ParsedRequest[];
  backendErrors: string[];
  responses: ReturnType<typeof readResponses>["responses"];
  closed: boolean;
}

/** Every way the outcome breaks the front door's promise; empty when it holds. */
function violations(outcome: Outcome): string[] {
  const problems: string[] = [];
  const { reference, forwarded, responses } = outcome;
  if (forwarded.length > reference.requests.length) {
    problems.push(
      `the backend read ${forwarded.length} requests, llhttp reads ${reference.requests.length} in what the client sent`,
    );
  }
  forwarded.forEach((got, i) => {
    const sent = reference.requests[i];
    const why = sent === undefined ? "an extra request" : difference(sent, got);
    if (why !== undefined) problems.push(`request ${i + 1}: ${why}`);
  });
  if (outcome.backendErrors.length > 0) {
    problems.push(
      `the backend's llhttp refused what the gateway sent: ${outcome.backendErrors.join(", ")}`,
    );
  }
  const fromBackend = responses.filter(r => r.fromBackend).length;
  if (fromBackend !== forwarded.length) {
    problems.push(
      `${forwarded.length} requests forwarded, ${fromBackend} of their answers reached the client`,
    );
  }
  const own = responses.findIndex(r => !r.fromBackend && !OWN_ANSWERS.has(r.status));
  if (own >= 0) {
    const status = responses[own]!.status;
    if (!REFUSALS.has(status)) problems.push(`the gateway answered ${status} itself`);
    if (own !== responses.length - 1)
      problems.push(`answers followed the gateway's refusal ${status}`);
    if (!outcome.closed) problems.push(`the connection stayed open after the refusal ${status}`);
  }
  const refused = own >= 0;
  if (outcome.case.expect === "serve") {
    if (refused) problems.push(`refused with ${responses[own]!.status}, but it must be served`);
    if (forwarded.length !== reference.requests.length) {
      problems.push(`${forwarded.length} of ${reference.requests.length} requests served`);
    }
  }
  if (outcome.case.expect === "refuse") {
    if (!refused) problems.push("served, but it must be refused");
    if (forwarded.some(r => r.target.includes("smuggled")))
      problems.push("a smuggled request reached the backend");
  }
  return problems;
}

/**
 * The rule by which the gateway refuses a request that llhttp parsed (the request, and the
 * client's bytes when it was the first of them); undefined when no rule explains a refusal.
 */
function stricterRule(request: ParsedRequest, bytes: Buffer | undefined): string | undefined {
  const text = bytes?.toString("latin1");
  if (text !== undefined && !/^(\r\n)*[A-Z]/.test(text)) {
    return "bytes before the request line other than empty lines (llhttp skips stray CR and LF)";
  }
  if (text !== undefined && !/^(\r\n)*[!-~]+ [!-~]+ HTTP\/\d\.\d\r\n/.test(text)) {
    return "a request line other than METHOD SP target SP HTTP/x.y (llhttp takes runs of spaces and HTTP/0.9)";
  }
  if (request.httpVersion !== "1.1" && request.httpVersion !== "1.0")
    return "HTTP/2.0 or 0.9 on HTTP/1 (505)";
  if (text !== undefined && /\r\ncontent-length:[^\r\n]*[0-9][ \t]+\r\n/i.test(text)) {
    return "whitespace after a Content-Length's digits";
  }
  if (text !== undefined && /\r\ncontent-length:[ ]*\t/i.test(text)) {
    return "a tab before a Content-Length's digits (nginx refuses it)";
  }
  if (
    request.fields.some(
      ([name, value]) => name.length + value.length + 2 > DEFAULT_FRONT_DOOR.maxFieldBytes,
    )
  ) {
    return "a field line over 16 KiB (431, ingress-nginx's buffer)";
  }
  const headBytes = request.fields.reduce(
    (n, [name, value]) => n + name.length + value.length + 4,
    0,
  );
  if (headBytes > DEFAULT_FRONT_DOOR.maxHeadBytes) return "a head over 64 KiB (431)";
  const target = parseTarget(request.target);
  if (isRefusal(target)) return `the target: ${target.reason}`;
  const hosts = request.fields.filter(([name]) => name.toLowerCase() === "host");
  if (hosts.length > 1) return "two Host fields (llhttp takes both)";
  if (hosts.length === 1 && !isValidHost(hosts[0]![1])) return "a Host that is not a host[:port]";
  if (target.authority === undefined && hosts.length === 0) return "no Host";
  const coding = field(request, "transfer-encoding");
  if (coding !== undefined && request.httpVersion === "1.0") return "Transfer-Encoding on HTTP/1.0";
  if (coding !== undefined && coding.trim().toLowerCase() !== "chunked") {
    return "a transfer coding other than chunked (501)";
  }
  if (request.target.length > DEFAULT_FRONT_DOOR.maxTargetBytes) return "a target over 8 KiB (414)";
  return undefined;
}

describe("the front door, differentially against llhttp", () => {
  const corpus = httpCorpus();
  let plane: CasePlane;
  let recorder: LlhttpRecorder;
  const outcomes: Outcome[] = [];

  before(async () => {
    recorder = await LlhttpRecorder.start();
    plane = await CasePlane.start(recorder);
    for (const c of corpus) {
      const backend = await plane.nextBackend();
      const reference = await recorder.parse(c.bytes);
      const client = await sendRaw(plane.port, c.bytes, reference.requests.length);
      // Bytes the gateway might still send after answering (a smuggled request) arrive in this time.
      await new Promise(resolve => setTimeout(resolve, 20));
      outcomes.push({
        case: c,
        reference,
        forwarded: backend.requests(),
        backendErrors: backend.errors(),
        responses: readResponses(client.bytes).responses,
        closed: client.closed,
      });
      await backend.close();
    }
  });
  after(async () => {
    await plane.close();
    await recorder.close();
  });

  it("has at least 500 cases, every category of the front-door issue among them", () => {
    assert.ok(corpus.length >= 500, `${corpus.length} cases`);
    const categories = new Set(corpus.map(c => c.category));
    for (const category of [
      "bare-lf",
      "bare-cr",
      "obs-fold",
      "space-before-colon",
      "content-length",
      "transfer-encoding",
      "chunked-body",
      "ctl-in-value",
      "name-byte",
      "target-byte",
      "host",
      "target",
      "request-line",
      "connection",
      "underscore",
      "size",
      "mutation",
      "valid",
    ]) {
      assert.ok(categories.has(category), category);
    }
  });

  it("forwards exactly what llhttp parses, or refuses and closes, in every case", () => {
    const broken = outcomes
      .map(outcome => ({ outcome, problems: violations(outcome) }))
      .filter(({ problems }) => problems.length > 0)
      .map(
        ({ outcome, problems }) =>
          `${outcome.case.category}: ${outcome.case.name}: ${problems.join("; ")}`,
      );
    assert.deepEqual(broken, []);
  });

  it("is never looser than llhttp: what llhttp refuses, the gateway refuses, or waits for the head's end", () => {
    const refusedByLlhttp = outcomes.filter(o => o.reference.error !== undefined);
    const refused = (o: Outcome) => o.responses.some(r => !r.fromBackend && REFUSALS.has(r.status));
    // llhttp refuses a bad byte as it reads it; the fast path reads a head once its blank line has
    // come (within the head deadline): until then it has forwarded nothing of it.
    const waiting = (o: Outcome) => !o.closed && o.forwarded.length === o.reference.requests.length;
    const looser = refusedByLlhttp
      .filter(o => !refused(o) && !waiting(o))
      .map(o => `${o.case.name} (llhttp: ${o.reference.error})`);
    assert.deepEqual(looser, []);
    assert.ok(refusedByLlhttp.filter(refused).length > refusedByLlhttp.length / 2);
  });

  it("refuses what llhttp accepts only by a rule stricter than llhttp's, named here", () => {
    const unexplained: string[] = [];
    const reasons = new Map<string, number>();
    for (const o of outcomes) {
      const next = o.reference.requests[o.forwarded.length];
      if (next === undefined) continue;
      const why = stricterRule(next, o.forwarded.length === 0 ? o.case.bytes : undefined);
      if (why === undefined) unexplained.push(`${o.case.category}: ${o.case.name}`);
      else reasons.set(why, (reasons.get(why) ?? 0) + 1);
    }
    assert.deepEqual(unexplained, []);
    // Each rule the corpus exercised, with how many cases it decided (shown when the test runs).
    for (const [why, count] of reasons) assert.ok(count > 0, why);
  });
});
