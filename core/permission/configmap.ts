// ConfigMap data rules, as the API server enforces them, for state kept in ConfigMaps.

export const CONFIGMAP_KEY_PATTERN = /^[-._a-zA-Z0-9]+$/;
export const CONFIGMAP_KEY_MAX = 253;
/** The API server's limit on a ConfigMap's data (keys and values, in bytes). */
export const CONFIGMAP_DATA_MAX_BYTES = 1024 * 1024;

/** validation.IsConfigMapKey: every reason `key` cannot be a ConfigMap data key, none when it can. */
export function configMapKeyProblems(key: string): string[] {
  const problems: string[] = [];
  if (key.length > CONFIGMAP_KEY_MAX) {
    problems.push(`must be no more than ${CONFIGMAP_KEY_MAX} characters`);
  }
  if (!CONFIGMAP_KEY_PATTERN.test(key)) {
    problems.push("must consist of alphanumeric characters, '-', '_' or '.'");
  }
  if (key === ".") problems.push("must not be '.'");
  else if (key === "..") problems.push("must not be '..'");
  else if (key.startsWith("..")) problems.push("must not start with '..'");
  return problems;
}

const utf8 = new TextEncoder();

/** The size the API server counts for `data`: the bytes of every key and value. */
export function configMapDataBytes(data: Readonly<Record<string, string>>): number {
  let total = 0;
  for (const [key, value] of Object.entries(data)) {
    total += utf8.encode(key).length + utf8.encode(value).length;
  }
  return total;
}
