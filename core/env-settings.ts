// Settings read from the environment through zod: each reader names the variable in its error,
// so a typo stops the process with the name the operator set (never a silent NaN or default).
import { z } from "zod";
import { parseSwitch } from "./switch";

/** An integer from `min` to `max`, `fallback` when unset. */
export function integer(name: string, fallback: number, min: number, max: number) {
  return z
    .string()
    .default(String(fallback))
    .transform((text, ctx) => {
      const value = Number(text);
      if (text.trim() === "" || !Number.isInteger(value) || value < min || value > max) {
        ctx.addIssue({
          code: "custom",
          message: `${name} must be an integer from ${min} to ${max}; got ${JSON.stringify(text)}`,
        });
        return z.NEVER;
      }
      return value;
    });
}

/** true/on or false/off (any case), `fallback` when unset. */
export function flag(name: string, fallback: boolean) {
  return z
    .string()
    .default(String(fallback))
    .transform((text, ctx) => {
      const value = parseSwitch(text);
      if (value === undefined) {
        ctx.addIssue({
          code: "custom",
          message: `${name} must be true or false; got ${JSON.stringify(text)}`,
        });
        return z.NEVER;
      }
      return value;
    });
}

/** One of `values`, `fallback` when unset. */
export function oneOf<const T extends readonly [string, ...string[]]>(
  name: string,
  values: T,
  fallback: T[number],
) {
  return z
    .string()
    .default(fallback)
    .transform((text, ctx) => {
      const found = values.find(v => v === text);
      if (found === undefined) {
        ctx.addIssue({
          code: "custom",
          message: `${name} must be one of ${values.join(", ")}; got ${JSON.stringify(text)}`,
        });
        return z.NEVER;
      }
      return found as T[number];
    });
}

/** A Kubernetes namespace name, `fallback` when unset. */
export function namespaceName(name: string, fallback: string) {
  return z
    .string()
    .default(fallback)
    .refine(text => /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(text), {
      message: `${name} must be a namespace name`,
    });
}

/** Parses `env` with `schema`, throwing one error that lists every bad variable. */
export function readEnv<S extends z.ZodType>(
  schema: S,
  env: NodeJS.ProcessEnv,
  what: string,
): z.output<S> {
  const parsed = schema.safeParse(env);
  if (parsed.success) return parsed.data;
  throw new Error(`${what} settings: ${parsed.error.issues.map(i => i.message).join("; ")}`);
}
