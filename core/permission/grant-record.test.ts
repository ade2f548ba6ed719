import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseGrantRecord, serializeGrantRecord, type GrantRecord } from "./grant-record";

const record: GrantRecord = {
  ip: "10.244.1.17",
  uid: "6f1c2b1e-3f0a-4a57-9a51-0d7f3c7e2a10",
  group: "db-readers",
  permissions: [
    {
      name: "read-orders",
      provider: "orders-mysql",
      params: { database: "orders", privileges: ["SELECT"] },
    },
  ],
  grantedAt: "2025-05-01T10:00:00Z",
};

const FIELD = 'metadata.annotations["permission.bulwark.dev/grant"]';

describe("parseGrantRecord", () => {
  it("given no annotation, returns undefined (never granted)", () => {
    assert.deepEqual(parseGrantRecord(undefined), { ok: true, value: undefined, warnings: [] });
  });

  it("given a serialized record, returns the same record", () => {
    assert.deepEqual(parseGrantRecord(serializeGrantRecord(record)), {
      ok: true,
      value: record,
      warnings: [],
    });
  });

  it("given an IPv6 record with an offset timestamp, returns it", () => {
    const v6 = { ...record, ip: "fd00:10:244::11", grantedAt: "2025-05-01T12:00:00+02:00" };
    assert.deepEqual(parseGrantRecord(JSON.stringify(v6)), { ok: true, value: v6, warnings: [] });
  });

  const bad: [string, string, RegExp][] = [
    ["malformed JSON", "{ip:", new RegExp(`^${escapeRegExp(FIELD)}: is not JSON: `)],
    ["an empty string", "", /is not JSON/],
    ["a JSON string", '"10.0.0.1"', new RegExp(`^${escapeRegExp(FIELD)}: `)],
    [
      "a bad IP",
      JSON.stringify({ ...record, ip: "10.0.0" }),
      new RegExp(`^${escapeRegExp(FIELD)}\\.ip: must be an IPv4 or IPv6 address$`),
    ],
    ["no UID", JSON.stringify({ ...record, uid: undefined }), /\.uid: /],
    ["a bad timestamp", JSON.stringify({ ...record, grantedAt: "yesterday" }), /\.grantedAt: /],
    [
      "a permission without a provider",
      JSON.stringify({ ...record, permissions: [{ name: "a", params: {} }] }),
      /\.permissions\[0\]\.provider: /,
    ],
  ];
  for (const [title, annotation, expected] of bad) {
    it(`given ${title}, returns an error naming the annotation`, () => {
      const result = parseGrantRecord(annotation);
      assert.equal(result.ok, false);
      assert.match(
        result.ok ? "" : `${result.errors[0]?.field}: ${result.errors[0]?.message}`,
        expected,
      );
    });
  }
});

describe("serializeGrantRecord", () => {
  it("given records whose keys come in different orders, returns the same string", () => {
    const { grantedAt, group, permissions, uid, ip } = record;
    assert.equal(
      serializeGrantRecord({ grantedAt, group, permissions, uid, ip }),
      serializeGrantRecord(record),
    );
  });

  it("given a record, returns JSON with ip first", () => {
    assert.match(serializeGrantRecord(record), /^\{"ip":"10\.244\.1\.17","uid":/);
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}
