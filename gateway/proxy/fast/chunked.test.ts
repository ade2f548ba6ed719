// The chunked scanner as a decoder (what an HTTP/2 client is sent): generated bodies, chunked
// with extensions and trailers, read in random pieces, must come out as the payload and trailer
// lines that went in, with the scanner stopping exactly at the body's end.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { seededRandom as random } from "../../../test/harness/generate";
import { ChunkedScanner } from "./chunked";

interface Encoded {
  wire: Buffer;
  payload: Buffer;
  trailers: string;
}

function encode(next: () => number): Encoded {
  const pieces: Buffer[] = [];
  const payloads: Buffer[] = [];
  const chunks = Math.floor(next() * 6);
  for (let i = 0; i < chunks; i++) {
    const data = Buffer.alloc(1 + Math.floor(next() * 3000), Math.floor(next() * 256));
    const size = data.length.toString(16);
    const spelled = next() < 0.3 ? size.toUpperCase() : size;
    const extension = next() < 0.3 ? ` ;name="v${i}"` : "";
    pieces.push(Buffer.from(`${spelled}${extension}\r\n`), data, Buffer.from("\r\n"));
    payloads.push(data);
  }
  let trailers = "";
  const fields = Math.floor(next() * 3);
  for (let i = 0; i < fields; i++) trailers += `x-t${i}: value ${i}\r\n`;
  pieces.push(Buffer.from(`0\r\n${trailers}\r\n`));
  return { wire: Buffer.concat(pieces), payload: Buffer.concat(payloads), trailers };
}

/** Scans `wire` (followed by `after`) in random pieces; the payload, trailers and end index. */
function decode(wire: Buffer, next: () => number) {
  const out: Buffer[] = [];
  const scanner = new ChunkedScanner((data, from, to) => out.push(data.subarray(from, to)), true);
  let at = 0;
  let end = -1;
  while (at < wire.length && end < 0) {
    const take = 1 + Math.floor(next() * 700);
    const piece = wire.subarray(at, at + take);
    const stop = scanner.scan(piece, 0);
    assert.notEqual(stop, -2, "well-formed framing");
    if (stop >= 0) end = at + stop;
    at += piece.length;
  }
  return { payload: Buffer.concat(out), trailers: scanner.trailerText, end };
}

describe("ChunkedScanner as a decoder", () => {
  it("given 300 generated bodies read in random pieces, hands on exactly the payload and keeps the trailer lines", () => {
    for (let seed = 1; seed <= 300; seed++) {
      const next = random(seed);
      const body = encode(next);
      const after = Buffer.from("HTTP/1.1 200 OK\r\n");
      const decoded = decode(Buffer.concat([body.wire, after]), next);
      assert.ok(decoded.payload.equals(body.payload), `payload, seed ${seed}`);
      assert.equal(decoded.trailers, body.trailers, `trailers, seed ${seed}`);
      assert.equal(decoded.end, body.wire.length, `end of body, seed ${seed}`);
    }
  });

  it("keeps no trailer text unless asked, and counts the payload either way", () => {
    const scanner = new ChunkedScanner();
    const wire = Buffer.from("3\r\nabc\r\n0\r\nx-a: 1\r\n\r\n");
    assert.equal(scanner.scan(wire, 0), wire.length);
    assert.equal(scanner.trailerText, "");
    assert.equal(scanner.payload, 3);
  });

  it("refuses a trailer section over 16 KiB as malformed framing", () => {
    const scanner = new ChunkedScanner(undefined, true);
    const line = `x-big: ${"v".repeat(1000)}\r\n`;
    const wire = Buffer.from(`0\r\n${line.repeat(17)}\r\n`);
    assert.equal(scanner.scan(wire, 0), -2);
  });

  it("still refuses bad framing while decoding: a bare LF after the data", () => {
    const seen: string[] = [];
    const scanner = new ChunkedScanner((data, from, to) =>
      seen.push(data.toString("latin1", from, to)),
    );
    assert.equal(scanner.scan(Buffer.from("3\r\nabc\n0\r\n\r\n"), 0), -2);
    assert.deepEqual(seen, ["abc"]);
  });
});
