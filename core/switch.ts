// An on/off setting as Bulwark's workloads and module read it from their environment.

const SWITCH: ReadonlyMap<string, boolean> = new Map([
  ["true", true],
  ["on", true],
  ["false", false],
  ["off", false],
]);

/** true/on or false/off, any case, spaces trimmed; undefined for anything else. */
export function parseSwitch(text: string): boolean | undefined {
  return SWITCH.get(text.trim().toLowerCase());
}
