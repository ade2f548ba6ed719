// `bulwark install ...`: what an install needs besides what `kubectl apply` or `helm install`
// writes. Today: `install secrets` (cli/install-secrets.ts). Also the release flags the
// commands that name an install's objects share (`permission tls` too).
import { releasePrefix } from "../core/names";
import { UsageError } from "./errors";
import { installSecrets } from "./install-secrets";

export const DEFAULT_INSTALL_NAMESPACE = "bulwark-system";
export const DEFAULT_RELEASE = "bulwark";
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export interface ReleaseValues {
  release?: string;
  prefix?: string;
}

/** The release and the prefix of its names, as the chart derives them (--prefix: fullnameOverride). */
export function releaseOf(values: ReleaseValues): { release: string; prefix: string } {
  const release = values.release ?? DEFAULT_RELEASE;
  for (const [flag, value] of [
    ["--release", release],
    ["--prefix", values.prefix],
  ] as const) {
    if (value !== undefined && !DNS_LABEL.test(value)) {
      throw new UsageError(`${flag} must be a DNS label (a-z, 0-9, -), got "${value}"`);
    }
  }
  return { release, prefix: releasePrefix(release, values.prefix ?? "") };
}

/** --days: the serving certificate's lifetime. */
export function daysOf(raw: string | undefined): number {
  const days = Number(raw ?? 365);
  if (!Number.isInteger(days) || days < 1) {
    throw new UsageError(`--days must be a whole number of days >= 1, got "${raw}"`);
  }
  return days;
}

export interface InstallValues extends ReleaseValues {
  namespace?: string;
  renew?: boolean;
  days?: string;
  san?: string[];
}

/**
 * `bulwark install secrets [...]`; usage problems throw UsageError. `chooseCluster` runs once the
 * command line is known to be right, before the first API call.
 */
export async function installCommand(
  positionals: readonly string[],
  values: InstallValues,
  out: (s: string) => void,
  chooseCluster: () => void,
): Promise<number> {
  const [, command, ...extra] = positionals;
  if (command !== "secrets") {
    throw new UsageError(`unknown command "install ${command ?? ""}"; see bulwark install --help`);
  }
  if (extra.length > 0) {
    throw new UsageError(`unexpected argument "${extra.join(" ")}" to install secrets`);
  }
  const options = {
    ...releaseOf(values),
    namespace: values.namespace ?? DEFAULT_INSTALL_NAMESPACE,
    renew: values.renew === true,
    days: daysOf(values.days),
    extraNames: values.san ?? [],
  };
  chooseCluster();
  await installSecrets(options, line => out(`${line}\n`));
  return 0;
}
