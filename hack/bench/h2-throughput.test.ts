import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { waitedChildrenCpuMs } from "./proc-cpu";
import { parseH2load, requestTimesUs } from "./h2-throughput";
import { quantile } from "./stats";

// h2load 1.52's summary, as it prints one (figures changed).
const SUMMARY = `starting benchmark...
spawning thread #0: 10 total client(s). Timing-based test with 0s of warm-up time and 10s of main duration for measurements.
TLS Protocol: TLSv1.3
Cipher: TLS_AES_128_GCM_SHA256
Server Temp Key: X25519 253 bits
Application protocol: h2
Main benchmark duration is started for client #0.

finished in 10.00s, 12345.60 req/s, 1.20MB/s
requests: 123456 total, 123500 started, 123456 done, 123450 succeeded, 6 failed, 0 errored, 0 timeout
status codes: 123450 2xx, 0 3xx, 0 4xx, 6 5xx
traffic: 12.00MB (12582912) total, 1.00MB (1048576) headers (space savings 90.00%), 2.50MB (2621440) data
                     min         max         mean         sd        +/- sd
time for request:      500us     40.00ms      8.00ms      2.00ms    70.00%
`;

describe("h2-throughput parsing", () => {
  it("reads h2load's totals, rate, statuses and negotiated protocol", () => {
    assert.deepEqual(parseH2load(SUMMARY), {
      requests: 123456,
      succeeded: 123450,
      rps: 12345.6,
      status2xx: 123450,
      protocol: "h2",
      cipher: "TLS_AES_128_GCM_SHA256",
    });
  });

  it("reads per-request times from the log file, ascending, skipping blank lines", () => {
    const log =
      "1733400000000000\t200\t900\n1733400000000100\t200\t300\n\n1733400000000200\t200\t600\n";
    assert.deepEqual(requestTimesUs(log), [300, 600, 900]);
  });

  it("takes quantiles by nearest rank", () => {
    const values = Array.from({ length: 100 }, (_, i) => i + 1);
    assert.equal(quantile(values, 0.5), 50);
    assert.equal(quantile(values, 0.99), 99);
    assert.equal(quantile([7], 0.99), 7);
    assert.ok(Number.isNaN(quantile([], 0.5)));
  });

  it("reads a shell's waited-for children's CPU from its stat line", () => {
    // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime
    const stat = "4242 (sh) S 1 4242 4242 0 -1 4194304 90 800 0 0 1 2 150 25 20 0 1 0";
    assert.equal(waitedChildrenCpuMs(stat), 1750);
  });
});
