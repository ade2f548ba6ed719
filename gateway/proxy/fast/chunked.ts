// Finds where a chunked body ends (RFC 9112 7.1) without decoding it: the bytes pass through as
// they came, the scanner only counts. It is strict, because what it passes is read again by the
// next hop: every line ends in CRLF (a bare CR or LF is refused), extensions and trailer lines hold
// no control character but HTAB, and only SP/HTAB may stand between a size and its ";".

import { IS_TCHAR } from "../request-rules";

const enum State {
  Size,
  SizeWs,
  Extension,
  SizeLf,
  Data,
  DataCr,
  DataLf,
  TrailerStart,
  Trailer,
  TrailerLf,
  EndLf,
  Done,
}

const CR = 13;
const LF = 10;
/** Chunk sizes above this (16 hex digits would overflow) are refused. */
const MAX_SIZE_DIGITS = 12;

function hexValue(byte: number): number {
  if (byte >= 48 && byte <= 57) return byte - 48;
  if (byte >= 97 && byte <= 102) return byte - 87;
  if (byte >= 65 && byte <= 70) return byte - 55;
  return -1;
}

/** Receives the payload of a chunked body, framing left out (an HTTP/2 client gets DATA only). */
export type ChunkSink = (data: Buffer, from: number, to: number) => void;

/** Trailer section bytes kept for relaying, at most (a larger section is refused as malformed). */
const MAX_TRAILER_BYTES = 16 * 1024;

export class ChunkedScanner {
  private state = State.Size;
  private size = 0;
  private digits = 0;
  private remaining = 0;
  /** Body bytes without the chunk framing, seen so far (the metrics' response bytes). */
  payload = 0;
  /** The trailer section's lines as they came ("name: value\r\n" each), when kept. */
  trailerText = "";

  /**
   * `sink`: given, each run of payload bytes is handed to it as it is scanned. `keepTrailers`:
   * the trailer section is kept in `trailerText`.
   */
  constructor(
    private readonly sink?: ChunkSink,
    private readonly keepTrailers = false,
  ) {}

  get done(): boolean {
    return this.state === State.Done;
  }

  /**
   * Scans `data` from `start`; returns the index just past the end of the body, -1 when the body
   * goes on, or -2 for malformed chunked framing.
   */
  scan(data: Buffer, start: number): number {
    let i = start;
    while (i < data.length) {
      if (this.state === State.Data) {
        const take = Math.min(this.remaining, data.length - i);
        if (take > 0 && this.sink !== undefined) this.sink(data, i, i + take);
        this.remaining -= take;
        this.payload += take;
        i += take;
        if (this.remaining === 0) this.state = State.DataCr;
        continue;
      }
      const byte = data[i]!;
      if (this.keepTrailers && this.state >= State.TrailerStart && !this.keepTrailerByte(byte)) {
        return -2;
      }
      if (!this.step(byte)) return -2;
      i++;
      if (this.state === State.Done) return i;
    }
    return -1;
  }

  /** A byte of a trailer line or of the CRLF ending it (the section's closing CRLF is not kept). */
  private keepTrailerByte(byte: number): boolean {
    const closing = (this.state === State.TrailerStart && byte === CR) || this.state >= State.EndLf;
    if (closing) return true;
    this.trailerText += String.fromCharCode(byte);
    return this.trailerText.length <= MAX_TRAILER_BYTES;
  }

  private step(byte: number): boolean {
    switch (this.state) {
      case State.Size:
        return this.sizeByte(byte);
      case State.SizeWs:
        return this.afterSize(byte);
      case State.Extension:
        if (byte === CR) this.state = State.SizeLf;
        return isLineByte(byte);
      case State.SizeLf:
        return this.sizeEnd(byte);
      case State.DataCr:
        this.state = State.DataLf;
        return byte === CR;
      case State.DataLf:
        this.state = State.Size;
        return byte === LF;
      default:
        return this.trailerByte(byte);
    }
  }

  private sizeByte(byte: number): boolean {
    const value = hexValue(byte);
    if (value >= 0) {
      this.size = this.size * 16 + value;
      return ++this.digits <= MAX_SIZE_DIGITS;
    }
    if (this.digits === 0) return false;
    return this.afterSize(byte);
  }

  /** After the size: BWS, then ";" and an extension, or the line's end. */
  private afterSize(byte: number): boolean {
    if (byte === CR) this.state = State.SizeLf;
    else if (byte === 59 /* ; */) this.state = State.Extension;
    else if (byte === 32 || byte === 9) this.state = State.SizeWs;
    else return false;
    return true;
  }

  private sizeEnd(byte: number): boolean {
    if (byte !== LF) return false;
    this.digits = 0;
    if (this.size === 0) {
      this.state = State.TrailerStart;
      return true;
    }
    this.remaining = this.size;
    this.size = 0;
    this.state = State.Data;
    return true;
  }

  private trailerByte(byte: number): boolean {
    switch (this.state) {
      case State.TrailerStart:
        // A trailer field starts with its name (no obs-fold), or the blank line ends the body.
        this.state = byte === CR ? State.EndLf : State.Trailer;
        return byte === CR || isNameByte(byte);
      case State.Trailer:
        if (byte === CR) this.state = State.TrailerLf;
        return isLineByte(byte);
      case State.TrailerLf:
        this.state = State.TrailerStart;
        return byte === LF;
      default:
        // EndLf
        this.state = State.Done;
        return byte === LF;
    }
  }
}

/** A byte inside a line: no control character but HTAB (CR ends the line; LF alone is refused). */
function isLineByte(byte: number): boolean {
  return byte === CR || byte === 9 || (byte >= 32 && byte !== 127);
}

function isNameByte(byte: number): boolean {
  return IS_TCHAR[byte] === 1;
}
