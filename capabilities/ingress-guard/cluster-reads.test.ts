import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ServingScope } from "../../core/ingress/selection";
import type { Ingress } from "../../core/ingress/types";
import { usersOf } from "./cluster-reads";

function ingress(name: string, className: string | undefined, secrets: string[]): Ingress {
  return {
    metadata: { name, namespace: "shop" },
    spec: {
      ingressClassName: className,
      tls: secrets.map(secretName => ({ hosts: [`${name}.example.com`], secretName })),
    },
  };
}

/** A scope whose class is (or is not) the default, and the questions it was asked. */
function scopeAsking(classIsDefault: boolean) {
  const asked: boolean[] = [];
  const scope = (classless: boolean): Promise<ServingScope> => {
    asked.push(classless);
    return Promise.resolve({
      classIsDefault: classless && classIsDefault,
      excludedNamespaces: new Set<string>(),
      ingressReferrers: new Set<string>(),
    });
  };
  return { scope, asked };
}

const names = (list: Ingress[]) => list.map(i => i.metadata?.name).sort();

describe("usersOf (a TLS Secret's Ingresses)", () => {
  const candidates = [
    ingress("ours", "bulwark", ["shop-tls"]),
    ingress("nginx-owned", "nginx", ["shop-tls"]),
    ingress("classless", undefined, ["shop-tls"]),
    ingress("other-secret", "bulwark", ["api-tls"]),
  ];

  it("asks nothing of the scope for a Secret no Ingress names (no read of the class)", async () => {
    const { scope, asked } = scopeAsking(true);
    assert.deepEqual(await usersOf(candidates, "unused", scope), []);
    assert.deepEqual(asked, []);
  });

  it("asks without the class when every Ingress naming the Secret names a class", async () => {
    const { scope, asked } = scopeAsking(true);
    assert.deepEqual(names(await usersOf(candidates, "api-tls", scope)), ["other-secret"]);
    assert.deepEqual(asked, [false]);
  });

  it("takes a classless Ingress as Bulwark's only while its class is the default", async () => {
    const byDefault = scopeAsking(true);
    assert.deepEqual(names(await usersOf(candidates, "shop-tls", byDefault.scope)), [
      "classless",
      "ours",
    ]);
    assert.deepEqual(byDefault.asked, [true]);
    const notDefault = scopeAsking(false);
    assert.deepEqual(names(await usersOf(candidates, "shop-tls", notDefault.scope)), ["ours"]);
  });
});
