import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  heldByOthers,
  holdersOf,
  ledgerIpLabel,
  ledgerLabels,
  parseLedgerSpec,
  withGranted,
  withIntent,
  withoutEntry,
  type LedgerSpec,
} from "./ledger";

const orders = {
  name: "orders",
  provider: "db",
  params: { database: "shop", privileges: ["SELECT"] },
};
const audit = {
  name: "audit",
  provider: "db",
  params: { database: "audit", privileges: ["SELECT"] },
};
const api = { name: "api", provider: "authz", params: { resource: "orders", action: "read" } };

function ledger(uid: string, entries: LedgerSpec["entries"]): LedgerSpec {
  return { pod: { namespace: "shop", name: `pod-${uid}`, uid }, group: "g", entries };
}

describe("ledger", () => {
  it("labels each IP it holds, IPv6 colons spelt as dashes (a valid label name)", () => {
    assert.equal(ledgerIpLabel("10.0.0.5"), "ip.permission.bulwark.dev/10.0.0.5");
    assert.equal(
      ledgerIpLabel("::1"),
      "ip.permission.bulwark.dev/v6-0000-0000-0000-0000-0000-0000-0000-0001",
    );
    // Every spelling of one address is one label.
    assert.equal(ledgerIpLabel("FD00::A:1"), ledgerIpLabel("fd00:0:0:0:0:0:a:1"));
    assert.equal(ledgerIpLabel("::ffff:10.0.0.1"), ledgerIpLabel("::ffff:a00:1"));
    assert.notEqual(ledgerIpLabel("fd00::1"), ledgerIpLabel("fd00::1:0"));
    const label = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
    for (const ip of ["::", "::1", "fe80::1", "2001:db8:0:0:0:0:0:ffff", "::ffff:10.0.0.1"]) {
      const name = ledgerIpLabel(ip).split("/")[1] ?? "";
      assert.match(name, label, ip);
      assert.ok(name.length <= 63, ip);
    }
    const spec = ledger("a", [
      { ip: "10.0.0.1", ...orders },
      { ip: "10.0.0.2", ...orders },
      { ip: "10.0.0.1", ...api },
    ]);
    assert.deepEqual(ledgerLabels(spec), {
      "ip.permission.bulwark.dev/10.0.0.1": "",
      "ip.permission.bulwark.dev/10.0.0.2": "",
    });
  });

  it("records intent once per (IP, permission), marks it granted, and removes one entry", () => {
    const at = new Date("2026-12-04T10:00:00Z");
    let spec = withIntent(ledger("a", []), [{ ip: "10.0.0.1", ...orders }]);
    spec = withIntent(spec, [
      { ip: "10.0.0.1", ...orders },
      { ip: "10.0.0.1", ...audit },
    ]);
    assert.deepEqual(
      spec.entries.map(e => e.name),
      ["orders", "audit"],
    );
    spec = withGranted(spec, [{ ip: "10.0.0.1", ...orders }], at);
    assert.equal(spec.entries[0]?.grantedAt, at.toISOString());
    assert.equal(spec.entries[1]?.grantedAt, undefined);
    // Granted again later: the first time stays.
    const later = withGranted(spec, [{ ip: "10.0.0.1", ...orders }], new Date(at.getTime() + 1));
    assert.equal(later.entries[0]?.grantedAt, at.toISOString());
    const left = withoutEntry(spec, { ip: "10.0.0.1", ...orders });
    assert.deepEqual(
      left.entries.map(e => e.name),
      ["audit"],
    );
    assert.equal(withoutEntry(left, { ip: "10.0.0.2", ...audit }).entries.length, 1, "other IP");
  });

  it("says what other pods hold at an IP through a provider, and who holds the same grant", () => {
    const ledgers = [
      ledger("old", [{ ip: "10.0.0.1", ...orders }]),
      ledger("new", [
        { ip: "10.0.0.1", ...audit },
        { ip: "10.0.0.1", ...api },
      ]),
      ledger("far", [{ ip: "10.0.0.2", ...orders }]),
    ];
    assert.deepEqual(heldByOthers(ledgers, { uid: "old", ip: "10.0.0.1", provider: "db" }), [
      audit.params,
    ]);
    assert.deepEqual(heldByOthers(ledgers, { uid: "new", ip: "10.0.0.1", provider: "db" }), [
      orders.params,
    ]);
    assert.deepEqual(heldByOthers(ledgers, { uid: "far", ip: "10.0.0.2", provider: "db" }), []);
    assert.deepEqual(holdersOf(ledgers, "old", { ip: "10.0.0.1", ...orders }), []);
    assert.deepEqual(holdersOf(ledgers, "far", { ip: "10.0.0.1", ...audit }), ["shop/pod-new"]);
    // Keys in another order (the API server sorts them) are the same params.
    const reordered = { ...api, params: { action: "read", resource: "orders" } };
    assert.deepEqual(holdersOf(ledgers, "x", { ip: "10.0.0.1", ...reordered }), ["shop/pod-new"]);
    assert.equal(withoutEntry(ledgers[1]!, { ip: "10.0.0.1", ...reordered }).entries.length, 1);
    // Another permission name asking the same thing of the same provider is the same grant.
    assert.deepEqual(holdersOf(ledgers, "x", { ip: "10.0.0.1", ...api, name: "other" }), [
      "shop/pod-new",
    ]);
  });

  it("refuses a malformed ledger object, naming the field", () => {
    const bad = parseLedgerSpec({
      pod: { namespace: "shop", name: "a", uid: "u" },
      group: "g",
      entries: [{ ...orders, ip: "10.0.0" }],
    });
    assert.equal(bad.ok, false);
    assert.match(JSON.stringify(!bad.ok && bad.errors), /spec\.entries\[0\]\.ip/);
    assert.equal(parseLedgerSpec(ledger("a", [{ ip: "10.0.0.1", ...orders }])).ok, true);
  });
});
