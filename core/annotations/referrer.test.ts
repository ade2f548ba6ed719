import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseReferrers, referrerAllowed, referrerAllowList } from "./referrer";
import { annotationKey } from "./validators";

describe("referrerAllowList / referrerAllowed (Tengine's verifyIngressReferrer)", () => {
  const cases: [string, string | undefined, string | undefined, boolean][] = [
    ["no referrer, no list", undefined, undefined, true],
    ["an empty referrer, no list", "", undefined, true],
    // The code splits "" into [""]: a named referrer needs a list (the docs say otherwise).
    ["a referrer, no list", "shop", undefined, false],
    ["a referrer in the list", "shop", "cms,shop", true],
    ["a referrer not in the list", "blog", "cms,shop", false],
    // strings.Split keeps spaces: " shop" is not "shop".
    ["a list written with spaces", "shop", "cms, shop", false],
    ["a referrer that differs in case", "Shop", "shop", false],
  ];
  for (const [title, referrer, list, expected] of cases) {
    it(`given ${title}, returns ${expected}`, () =>
      assert.equal(referrerAllowed(referrer, referrerAllowList(list)), expected));
  }
});

describe("parseReferrers", () => {
  it("reads both marks as plain strings", () => {
    const parsed = parseReferrers({
      [annotationKey("ingress-referrer")]: "shop",
      [annotationKey("canary-referrer")]: "release-bot",
    });
    assert.deepEqual(parsed.ok && parsed.value, {
      ingressReferrer: "shop",
      canaryReferrer: "release-bot",
    });
  });
  it("refuses a control character, naming the key", () => {
    const parsed = parseReferrers({ [annotationKey("ingress-referrer")]: "a\nb" });
    assert.equal(parsed.ok, false);
    assert.match(JSON.stringify(!parsed.ok && parsed.errors), /ingress-referrer/);
  });
});
