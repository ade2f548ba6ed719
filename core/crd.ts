// The envelope every Bulwark CustomResourceDefinition shares: one served, stored version with a
// status subresource, a structural schema of {spec, status}, and printer columns.

export interface CrdNames {
  kind: string;
  plural: string;
  singular: string;
  shortName: string;
}

export interface CrdDefinition<C extends object, S extends object, T extends object> {
  group: string;
  version: string;
  scope: "Namespaced" | "Cluster";
  names: CrdNames;
  description: string;
  printerColumns: C[];
  spec: S;
  status: T;
}

export function customResourceDefinition<C extends object, S extends object, T extends object>(
  d: CrdDefinition<C, S, T>,
) {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${d.names.plural}.${d.group}` },
    spec: {
      group: d.group,
      scope: d.scope,
      names: {
        kind: d.names.kind,
        listKind: `${d.names.kind}List`,
        plural: d.names.plural,
        singular: d.names.singular,
        shortNames: [d.names.shortName],
      },
      versions: [
        {
          name: d.version,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: d.printerColumns,
          schema: {
            openAPIV3Schema: {
              type: "object",
              description: d.description,
              required: ["spec"],
              properties: {
                apiVersion: { type: "string" },
                kind: { type: "string" },
                metadata: { type: "object" },
                spec: d.spec,
                status: d.status,
              },
            },
          },
        },
      ],
    },
  };
}
