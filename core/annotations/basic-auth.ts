// ingress-nginx's basic authentication (internal/ingress/annotations/auth): `auth-type: basic` with
// the users of `auth-secret` (an htpasswd file under the key "auth", or one key per user with
// `auth-secret-type: auth-map`) and the `auth-realm` shown in the 401's WWW-Authenticate. Values are
// read as ingress-nginx reads them (spaces removed from the type, the secret and its type; the
// realm in its character set), but where ingress-nginx would serve the route open (auth-secret
// without auth-type, a realm of "off", which nginx reads as auth_basic off) or deny it at request
// time (no auth-secret, a Secret of another namespace), the Ingress is refused at admission.
import { z } from "zod";
import { annotationPath, keyOf, parseFamily, type Family } from "./family";
import { annotation, bad, good, type Parsed } from "./validators";
import type { FieldError, Result } from "../result";

const fields = {
  type: {
    annotation: "auth-type",
    type: '"basic"',
    default: "",
    doc: 'Basic authentication for every path of the Ingress: a client without valid credentials from auth-secret gets 401 with WWW-Authenticate. "digest" is refused (not implemented).',
  },
  secret: {
    annotation: "auth-secret",
    type: 'Secret "name" (or "namespace/name" of the same namespace)',
    default: "",
    doc: "The Opaque Secret of the Ingress's namespace that holds the users and password hashes (htpasswd: bcrypt, apr1, {SHA}, {SSHA}, {PLAIN}, $1$/$5$/$6$ crypt). Another namespace is refused. Missing or unreadable, the route answers 503.",
  },
  secretType: {
    annotation: "auth-secret-type",
    type: '"auth-file" or "auth-map"',
    default: "auth-file",
    doc: '"auth-file": the Secret\'s key "auth" is an htpasswd file; "auth-map": each key is a user and its value the password hash.',
  },
  realm: {
    annotation: "auth-realm",
    type: "text (letters, digits, spaces and -._~/:)",
    default: '""',
    doc: 'The realm in WWW-Authenticate: Basic realm="…" (ingress-nginx\'s default is empty). "off" is refused: nginx would turn authentication off.',
  },
} as const;

type Field = keyof typeof fields;

export type AuthSecretType = "auth-file" | "auth-map";

/** The Secret auth-secret names; namespace undefined: the Ingress's own. */
export interface AuthSecretRef {
  namespace: string | undefined;
  name: string;
}

/** ingress-nginx's authTypeRegex, read whole: "basic"; "digest" is named as not implemented. */
export function parseAuthType(raw: string): Parsed<"basic"> {
  const word = raw.replaceAll(" ", "");
  if (word === "basic") return good("basic");
  if (word === "digest") {
    return bad('"basic"', raw, "digest authentication is not implemented by Bulwark");
  }
  return bad('"basic"', raw);
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** "name" or "namespace/name", as client-go's SplitMetaNamespaceKey, each part a Kubernetes name. */
export function parseAuthSecret(raw: string): Parsed<AuthSecretRef> {
  const parts = raw.replaceAll(" ", "").split("/");
  const expected = 'a Secret as "name" or "namespace/name"';
  if (parts.length > 2) return bad(expected, raw);
  const name = parts[parts.length - 1] ?? "";
  const namespace = parts.length === 2 ? parts[0] : undefined;
  const nameValid = name.length <= 253 && DNS_SUBDOMAIN.test(name);
  const namespaceValid =
    namespace === undefined || (namespace.length <= 63 && DNS_LABEL.test(namespace));
  return nameValid && namespaceValid ? good({ namespace, name }) : bad(expected, raw);
}

export function parseAuthSecretType(raw: string): Parsed<AuthSecretType> {
  const word = raw.replaceAll(" ", "");
  if (word === "auth-file" || word === "auth-map") return good(word);
  return bad('"auth-file" or "auth-map"', raw);
}

// ingress-nginx's CharsWithSpace: the only characters it lets into the quoted realm.
const REALM = /^[-._~a-zA-Z0-9/: ]*$/;

export function parseAuthRealm(raw: string): Parsed<string> {
  const expected = 'text of letters, digits, spaces and "-._~/:"';
  if (!REALM.test(raw)) return bad(expected, raw);
  if (raw === "off") {
    return bad(expected, raw, 'nginx reads the realm "off" as authentication off');
  }
  return good(raw);
}

export const basicAuthSchema = z
  .object({
    type: annotation(parseAuthType).optional(),
    secret: annotation(parseAuthSecret).optional(),
    secretType: annotation(parseAuthSecretType).optional(),
    realm: annotation(parseAuthRealm).optional(),
  } satisfies Record<Field, z.ZodType>)
  .superRefine((v, ctx) => {
    const type = keyOf({ fields }, "type");
    if (v.type === undefined) {
      // ingress-nginx ignores them without auth-type: the route would be served open.
      for (const field of ["secret", "secretType", "realm"] as const) {
        if (v[field] === undefined) continue;
        ctx.addIssue({
          code: "custom",
          path: [field],
          message: `needs ${type}: "basic" (without it ingress-nginx serves the route without authentication)`,
        });
      }
      return;
    }
    if (v.secret === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["type"],
        message: `needs ${keyOf({ fields }, "secret")}, the Secret with the users`,
      });
    }
  })
  .transform(v => ({
    type: v.type ?? ("basic" as const),
    secret: v.secret ?? { namespace: undefined, name: "" },
    secretType: v.secretType ?? ("auth-file" as AuthSecretType),
    realm: v.realm ?? "",
  }));

export type BasicAuthConfig = z.output<typeof basicAuthSchema>;

export const basicAuthFamily: Family<BasicAuthConfig, Field> = {
  name: "basic-auth",
  fields,
  schema: basicAuthSchema,
};

export function parseBasicAuth(
  annotations: Readonly<Record<string, string>> | undefined,
): Result<BasicAuthConfig | undefined> {
  return parseFamily(basicAuthFamily, annotations);
}

/** namespace/name of the auth Secret, the Ingress's namespace filled in. */
export function authSecretKey(config: BasicAuthConfig, ingressNamespace: string): string {
  return `${config.secret.namespace ?? ingressNamespace}/${config.secret.name}`;
}

/**
 * A Secret of another namespace is refused (ingress-nginx's default, allow-cross-namespace-resources
 * off, denies it too): a tenant must not make the gateway read another namespace's users.
 */
export function basicAuthNamespaceErrors(
  config: BasicAuthConfig | undefined,
  ingressNamespace: string,
): FieldError[] {
  const namespace = config?.secret.namespace;
  if (namespace === undefined || namespace === ingressNamespace) return [];
  return [
    {
      field: annotationPath(keyOf(basicAuthFamily, "secret")),
      message: `names a Secret in namespace "${namespace}": only the Ingress's own namespace ("${ingressNamespace}") may be used`,
    },
  ];
}
