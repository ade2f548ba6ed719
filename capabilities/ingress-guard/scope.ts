// The ingress guard's view of which Ingresses are Bulwark's (core/ingress/selection.ts): the
// excluded namespaces from the module's environment, the default class from the cluster.
import { Log } from "pepr";
import {
  DEFAULT_SCOPE,
  parseExcludedNamespaces,
  type ServingScope,
} from "../../core/ingress/selection";
import type { SecurityAnnotationMode } from "../../core/ingress/review-ingress";
import { referrerAllowList } from "../../core/annotations/referrer";
import {
  DEFAULT_KEYS_LOCATION,
  DEFAULT_PUBLISHER_NAMESPACES,
  GUARD_MODE_VARIABLES,
  parseGuardMode,
  parseKeysLocation,
  parsePublisherNamespaces,
  type GuardMode,
  type KeysLocation,
} from "../../core/checksum";
import { CONFIG_MAPS, resourcePath } from "../../kube/api-paths";
import { keptAliveApi } from "../../kube/kept-alive-api";
import { parseSwitch } from "../../core/switch";
import type { ChecksumKind } from "../../core/checksum/crd";

/**
 * BULWARK_EXCLUDED_NAMESPACES, as the gateway reads it. A bad value falls back to the default,
 * the webhook-skipped namespaces: never serve or count more than admission saw.
 */
export function excludedNamespaces(env: NodeJS.ProcessEnv = process.env): ReadonlySet<string> {
  const parsed = parseExcludedNamespaces(env.BULWARK_EXCLUDED_NAMESPACES);
  if (parsed.ok) return parsed.value;
  Log.error(
    { err: parsed.errors[0]?.message },
    "BULWARK_EXCLUDED_NAMESPACES is invalid; using the default (the namespaces the webhooks skip)",
  );
  return DEFAULT_SCOPE.excludedNamespaces;
}

/** BULWARK_UNSUPPORTED_SECURITY_ANNOTATIONS: "deny" (default) or "warn" (migration). */
export function securityAnnotationMode(
  env: NodeJS.ProcessEnv = process.env,
): SecurityAnnotationMode {
  const raw = env.BULWARK_UNSUPPORTED_SECURITY_ANNOTATIONS;
  if (raw === undefined || raw === "deny") return "deny";
  if (raw === "warn") return "warn";
  Log.error(
    { value: raw },
    'BULWARK_UNSUPPORTED_SECURITY_ANNOTATIONS must be "deny" or "warn"; denying',
  );
  return "deny";
}

/** The scope from the environment alone, the class not yet known (not the default). */
export function settingsScope(env: NodeJS.ProcessEnv = process.env): ServingScope {
  return {
    classIsDefault: false,
    excludedNamespaces: excludedNamespaces(env),
    ingressReferrers: referrerAllowList(env.BULWARK_INGRESS_REFERRERS),
  };
}

/** BULWARK_CHECKSUM_PUBLISHER_NAMESPACES; a bad value trusts the default only (never more). */
export function publisherNamespaces(env: NodeJS.ProcessEnv = process.env): ReadonlySet<string> {
  const parsed = parsePublisherNamespaces(env.BULWARK_CHECKSUM_PUBLISHER_NAMESPACES);
  if (parsed.ok) return parsed.value;
  Log.error(
    { err: parsed.errors[0]?.message },
    "BULWARK_CHECKSUM_PUBLISHER_NAMESPACES is invalid; trusting bulwark-system only",
  );
  return new Set(DEFAULT_PUBLISHER_NAMESPACES);
}

/**
 * The gateway's guard mode per kind (the chart gives the module the same variables), so that
 * statuses and Events say what a mismatch does to traffic. The module refuses nothing itself;
 * a bad value is reported as enforce, the stricter reading.
 */
export function guardModes(env: NodeJS.ProcessEnv = process.env): Record<ChecksumKind, GuardMode> {
  const mode = (kind: ChecksumKind): GuardMode => {
    const name = GUARD_MODE_VARIABLES[kind];
    const parsed = parseGuardMode(env[name], name);
    if (parsed.ok) return parsed.value;
    Log.error({ err: parsed.errors[0]?.message }, `${name} is invalid; reporting as enforce`);
    return "enforce";
  };
  return { ingress: mode("ingress"), secret: mode("secret") };
}

/**
 * BULWARK_CHECKSUM_REQUIRE_SIGNATURE and BULWARK_CHECKSUM_KEYS, as the gateway reads them. A bad
 * value requires signatures (the stricter reading) from the default ConfigMap.
 */
export function signatureSettings(env: NodeJS.ProcessEnv = process.env): {
  required: boolean;
  keys: KeysLocation;
} {
  const raw = env.BULWARK_CHECKSUM_REQUIRE_SIGNATURE ?? "false";
  const flag = parseSwitch(raw);
  if (flag === undefined)
    Log.error(
      { value: raw },
      "BULWARK_CHECKSUM_REQUIRE_SIGNATURE is invalid; requiring signatures",
    );
  const keys = parseKeysLocation(env.BULWARK_CHECKSUM_KEYS, "BULWARK_CHECKSUM_KEYS");
  if (!keys.ok)
    Log.error(
      { err: keys.errors[0]?.message },
      "BULWARK_CHECKSUM_KEYS is invalid; using the default",
    );
  return { required: flag ?? true, keys: keys.ok ? keys.value : DEFAULT_KEYS_LOCATION };
}

/** The trusted keys' ConfigMap data; none when it does not exist. */
export async function readTrustedKeyData(
  location: KeysLocation,
): Promise<Record<string, string> | undefined> {
  const path = resourcePath(CONFIG_MAPS, location);
  return (await keptAliveApi().getIfExists<{ data?: Record<string, string> }>(path))?.data;
}
