import { DEFAULT_SCOPE } from "../../core/ingress/selection";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { V1EndpointSlice, V1Ingress, V1Secret, V1Service } from "@kubernetes/client-node";
import {
  composeView,
  sameServed,
  referencedServices,
  type ComposeInput,
  type GuardState,
  type Refusal,
  type ServedState,
} from "./compose";

const P = "nginx.ingress.kubernetes.io/";

function ingress(
  name: string,
  rv: string,
  extra: {
    annotations?: Record<string, string>;
    className?: string;
    tls?: string;
    terminating?: boolean;
  } = {},
): V1Ingress {
  return {
    metadata: {
      name,
      namespace: "shop",
      resourceVersion: rv,
      annotations: extra.annotations,
      ...(extra.terminating
        ? { deletionTimestamp: "2026-01-01T00:00:00Z" as unknown as Date }
        : {}),
    },
    spec: {
      ingressClassName: extra.className ?? "bulwark",
      rules: [
        {
          host: `${name}.example.com`,
          http: {
            paths: [
              {
                path: "/",
                pathType: "Prefix",
                backend: { service: { name: `${name}-svc`, port: { number: 80 } } },
              },
            ],
          },
        },
      ],
      ...(extra.tls ? { tls: [{ hosts: [`${name}.example.com`], secretName: extra.tls }] } : {}),
    },
  };
}

function secret(name: string, rv: string, annotations?: Record<string, string>): V1Secret {
  const b64 = (s: string): string => Buffer.from(s).toString("base64");
  return {
    metadata: { name, namespace: "shop", resourceVersion: rv, annotations },
    type: "kubernetes.io/tls",
    data: { "tls.crt": b64(`CERT ${name}@${rv}`), "tls.key": b64(`KEY ${name}@${rv}`) },
  };
}

function slice(service: string, rv = "1"): V1EndpointSlice {
  return {
    addressType: "IPv4",
    endpoints: [{ addresses: ["127.0.0.1"] }],
    metadata: {
      name: `${service}-abc`,
      namespace: "shop",
      resourceVersion: rv,
      labels: { "kubernetes.io/service-name": service },
    },
  };
}

function service(name: string, rv = "1"): V1Service {
  return {
    metadata: { name, namespace: "shop", resourceVersion: rv },
    spec: { ports: [{ name: "http", port: 80, targetPort: 8080 as never }] },
  };
}

function input(
  overrides: Partial<ComposeInput> & { ings?: V1Ingress[]; secs?: V1Secret[] } = {},
): ComposeInput {
  const { ings = [], secs = [], ...rest } = overrides;
  return {
    ordinal: 0,
    ingresses: ings,
    secrets: new Map(secs.map(s => [`shop/${s.metadata?.name ?? ""}`, s])),
    endpointSlices: [],
    services: [],
    classClaimed: true,
    scope: DEFAULT_SCOPE,
    guard: { ingress: "off", secret: "off" },
    previous: undefined,
    ...rest,
  };
}

function served(state: ServedState | undefined): string[] {
  return (state?.view.ingresses ?? []).map(
    i => `${i.metadata?.name ?? ""}@${i.metadata?.resourceVersion ?? ""}`,
  );
}

const previousState: ServedState = composeView(
  input({ ings: [ingress("a-1", "10"), ingress("b-2", "11")] }),
).state as ServedState;

describe("composeView: class and checksum guard", () => {
  const rows: {
    title: string;
    guard: GuardState;
    claimed?: boolean;
    previous?: ServedState;
    ings: V1Ingress[];
    served: string[] | undefined;
    refusal?: Refusal;
  }[] = [
    {
      title: "guard off, fresh pod",
      guard: "off",
      ings: [ingress("a-1", "20")],
      served: ["a-1@20"],
    },
    {
      title: "checksum matched",
      guard: "matched",
      previous: previousState,
      ings: [ingress("a-1", "20")],
      served: ["a-1@20"],
    },
    {
      title: "mismatch keeps the last good view",
      guard: "mismatch",
      previous: previousState,
      ings: [ingress("a-1", "20")],
      served: ["a-1@10", "b-2@11"],
      refusal: "mismatch",
    },
    {
      title: "mismatch on a fresh pod: nothing to serve",
      guard: "mismatch",
      ings: [ingress("a-1", "20")],
      served: undefined,
      refusal: "mismatch",
    },
    {
      title: "checksum on but none published",
      guard: "no-checksum",
      previous: previousState,
      ings: [ingress("a-1", "20")],
      served: ["a-1@10", "b-2@11"],
      refusal: "no-checksum",
    },
    {
      title: "an empty set never replaces a non-empty one",
      guard: "matched",
      previous: previousState,
      ings: [],
      served: ["a-1@10", "b-2@11"],
      refusal: "empty",
    },
    {
      title: "other classes do not count",
      guard: "off",
      previous: previousState,
      ings: [ingress("a-1", "20", { className: "nginx" })],
      served: ["a-1@10", "b-2@11"],
      refusal: "empty",
    },
    { title: "an empty set on a fresh pod is a good view", guard: "off", ings: [], served: [] },
    {
      title: "IngressClass bulwark missing",
      guard: "off",
      claimed: false,
      previous: previousState,
      ings: [ingress("a-1", "20")],
      served: ["a-1@10", "b-2@11"],
      refusal: "class",
    },
  ];
  for (const row of rows) {
    it(`given ${row.title}, serves ${row.served?.join(",") ?? "nothing"}`, () => {
      const result = composeView(
        input({
          ings: row.ings,
          guard: { ingress: row.guard, secret: "off" },
          previous: row.previous,
          classClaimed: row.claimed ?? true,
        }),
      );
      assert.deepEqual(row.served === undefined ? undefined : served(result.state), row.served);
      if (row.served === undefined) assert.equal(result.state, undefined);
      assert.equal(result.ingress.refusal, row.refusal);
      assert.equal(result.ingress.accepted, row.refusal === undefined);
    });
  }
});

describe("composeView: batched rollout", () => {
  const rolled = (index: string): Record<string, string> => ({
    [`${P}ingress-rollout`]: "true",
    [`${P}ingress-rollout-index-id`]: index,
  });
  const rows: {
    title: string;
    ordinal: number;
    ings: V1Ingress[];
    served: string[];
    held: string[];
  }[] = [
    {
      title: "index 1 on ordinal 0 applies the update",
      ordinal: 0,
      ings: [ingress("a-1", "20", { annotations: rolled("1") }), ingress("b-2", "11")],
      served: ["a-1@20", "b-2@11"],
      held: [],
    },
    {
      title: "index 1 on ordinal 1 keeps the current revision",
      ordinal: 1,
      ings: [ingress("a-1", "20", { annotations: rolled("1") }), ingress("b-2", "11")],
      served: ["a-1@10", "b-2@11"],
      held: ["shop/a-1"],
    },
    {
      title: "a new rolled-out object waits for the index",
      ordinal: 1,
      ings: [
        ingress("a-1", "10"),
        ingress("b-2", "11"),
        ingress("c-3", "30", { annotations: rolled("1") }),
      ],
      served: ["a-1@10", "b-2@11"],
      held: ["shop/c-3"],
    },
    {
      title: "a rolled-out delete waits outside the batch",
      ordinal: 1,
      ings: [
        ingress("a-1", "21", { annotations: rolled("1"), terminating: true }),
        ingress("b-2", "11"),
      ],
      served: ["a-1@10", "b-2@11"],
      held: ["shop/a-1"],
    },
    {
      title: "a rolled-out delete applies inside the batch",
      ordinal: 0,
      ings: [
        ingress("a-1", "21", { annotations: rolled("1"), terminating: true }),
        ingress("b-2", "11"),
      ],
      served: ["b-2@11"],
      held: [],
    },
    {
      title: "a plain delete applies at once",
      ordinal: 1,
      ings: [ingress("b-2", "11")],
      served: ["b-2@11"],
      held: [],
    },
  ];
  for (const row of rows) {
    it(`given ${row.title}, serves ${row.served.join(",")}`, () => {
      const result = composeView(
        input({ ordinal: row.ordinal, ings: row.ings, previous: previousState }),
      );
      assert.deepEqual(served(result.state), row.served);
      assert.deepEqual(Object.keys(result.ingress.held), row.held);
    });
  }

  it("keeps the current revision across a restart: the previous state comes from disk as JSON", () => {
    const fromDisk = JSON.parse(JSON.stringify(previousState)) as ServedState;
    const result = composeView(
      input({
        ordinal: 1,
        ings: [ingress("a-1", "20", { annotations: rolled("1") }), ingress("b-2", "11")],
        previous: fromDisk,
      }),
    );
    assert.deepEqual(served(result.state), ["a-1@10", "b-2@11"]);
  });
});

describe("composeView: TLS pairs", () => {
  const ings = [ingress("a-1", "10", { tls: "a-tls" })];
  it("decodes the Secrets the served Ingresses name", () => {
    const result = composeView(
      input({ ings, secs: [secret("a-tls", "5"), secret("unused", "6")] }),
    );
    assert.deepEqual(result.state?.view.tlsPairs, [
      { namespace: "shop", name: "a-tls", cert: "CERT a-tls@5", key: "KEY a-tls@5" },
    ]);
    assert.deepEqual(result.state?.secretVersions, { "shop/a-tls": "5" });
  });

  it("reports a missing Secret as a problem and serves the rest", () => {
    const result = composeView(input({ ings }));
    assert.deepEqual(result.state?.view.tlsPairs, []);
    assert.match(result.problems[0] ?? "", /shop\/a-tls: not found/);
  });

  it("keeps the previous certificates on a Secret checksum mismatch", () => {
    const previous = composeView(input({ ings, secs: [secret("a-tls", "5")] })).state;
    const result = composeView(
      input({
        ings,
        secs: [secret("a-tls", "6")],
        previous,
        guard: { ingress: "off", secret: "mismatch" },
      }),
    );
    assert.equal(result.secret.refusal, "mismatch");
    assert.equal(result.state?.view.tlsPairs[0]?.cert, "CERT a-tls@5");
  });

  it("secret-rollout holds the old certificate outside the batch", () => {
    const previous = composeView(input({ ings, secs: [secret("a-tls", "5")] })).state;
    const rolled = secret("a-tls", "6", {
      [`${P}secret-rollout`]: "true",
      [`${P}secret-rollout-index-id`]: "1",
    });
    const outside = composeView(input({ ordinal: 1, ings, secs: [rolled], previous }));
    const inside = composeView(input({ ordinal: 0, ings, secs: [rolled], previous }));
    assert.equal(outside.state?.view.tlsPairs[0]?.cert, "CERT a-tls@5");
    assert.equal(outside.state?.secretVersions["shop/a-tls"], "5");
    assert.equal(inside.state?.view.tlsPairs[0]?.cert, "CERT a-tls@6");
  });
});

describe("composeView: EndpointSlices", () => {
  it("takes the slices of the Services the served Ingresses name", () => {
    const result = composeView(
      input({ ings: [ingress("a-1", "10")], endpointSlices: [slice("a-1-svc"), slice("other")] }),
    );
    assert.deepEqual(
      result.state?.view.endpointSlices.map(s => s.metadata?.name),
      ["a-1-svc-abc"],
    );
  });

  it("keeps the previous slices while they have not been listed (a restart during an outage)", () => {
    const previous = composeView(
      input({ ings: [ingress("a-1", "10")], endpointSlices: [slice("a-1-svc")] }),
    ).state;
    const result = composeView(
      input({ ings: [ingress("a-1", "10")], endpointSlices: undefined, previous }),
    );
    assert.deepEqual(
      result.state?.view.endpointSlices.map(s => s.metadata?.name),
      ["a-1-svc-abc"],
    );
  });

  it("names default backends and rule backends", () => {
    const i = ingress("a-1", "1");
    i.spec = { ...i.spec, defaultBackend: { service: { name: "fallback", port: { number: 80 } } } };
    assert.deepEqual([...referencedServices([i])].sort(), ["shop/a-1-svc", "shop/fallback"]);
  });
});

describe("composeView: default IngressClass", () => {
  const classless = (): V1Ingress => {
    const i = ingress("plain-3", "1");
    delete i.spec?.ingressClassName;
    return i;
  };
  const legacy = (value: string): V1Ingress => {
    const i = ingress(`legacy-${value}-4`, "1", {
      annotations: { "kubernetes.io/ingress.class": value },
    });
    delete i.spec?.ingressClassName;
    return i;
  };
  const ings = [ingress("a-1", "10"), classless(), legacy("bulwark"), legacy("nginx")];

  it("given our class is the default, serves Ingresses naming no class too", () => {
    const result = composeView(input({ ings, scope: { ...DEFAULT_SCOPE, classIsDefault: true } }));
    assert.deepEqual(served(result.state), ["a-1@10", "plain-3@1", "legacy-bulwark-4@1"]);
    assert.equal(result.ingress.candidates, 3);
  });

  it("given our class is not the default, serves only Ingresses naming it", () => {
    const result = composeView(input({ ings, scope: DEFAULT_SCOPE }));
    assert.deepEqual(served(result.state), ["a-1@10", "legacy-bulwark-4@1"]);
  });
});

describe("composeView: Services", () => {
  it("takes only the Services the served Ingresses name", () => {
    const result = composeView(
      input({ ings: [ingress("a-1", "10")], services: [service("a-1-svc"), service("other")] }),
    );
    assert.deepEqual(
      result.state?.view.services?.map(s => s.metadata?.name),
      ["a-1-svc"],
    );
  });

  it("keeps the previous Services while they have not been listed", () => {
    const previous = composeView(
      input({ ings: [ingress("a-1", "10")], services: [service("a-1-svc")] }),
    ).state;
    const result = composeView(
      input({ ings: [ingress("a-1", "10")], services: undefined, previous }),
    );
    assert.deepEqual(
      result.state?.view.services?.map(s => s.metadata?.name),
      ["a-1-svc"],
    );
  });
});

describe("sameServed", () => {
  it("is false when a named Service is replaced", () => {
    const ings = [ingress("a-1", "10")];
    const services = [service("a-1-svc")];
    const a = composeView(input({ ings, services })).state as ServedState;
    const b = composeView(input({ ings, services })).state as ServedState;
    const c = composeView(input({ ings, services: [service("a-1-svc", "2")] }))
      .state as ServedState;
    assert.equal(sameServed(a, b), true);
    assert.equal(sameServed(a, c), false);
  });

  it("is true for the same objects, false when one is replaced or a Secret version changes", () => {
    const ings = [ingress("a-1", "10", { tls: "a-tls" })];
    const slices = [slice("a-1-svc")];
    const secs = [secret("a-tls", "5")];
    const a = composeView(input({ ings, endpointSlices: slices, secs })).state as ServedState;
    const b = composeView(input({ ings, endpointSlices: slices, secs })).state as ServedState;
    const c = composeView(input({ ings, endpointSlices: [slice("a-1-svc", "2")], secs }))
      .state as ServedState;
    const d = composeView(input({ ings, endpointSlices: slices, secs: [secret("a-tls", "6")] }))
      .state as ServedState;
    const fromDisk = JSON.parse(JSON.stringify(a)) as ServedState;
    assert.equal(sameServed(a, b), true);
    assert.equal(sameServed(a, c), false);
    assert.equal(sameServed(a, d), false);
    assert.equal(sameServed(a, fromDisk), false);
  });
});
