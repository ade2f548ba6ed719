import js from "@eslint/js";
import tsPlugin from "@typescript-eslint/eslint-plugin";
import tsParser from "@typescript-eslint/parser";
import globals from "globals";
import path from "node:path";
import { fileURLToPath } from "node:url";

const tsconfigRootDir = path.dirname(fileURLToPath(import.meta.url));

export default [
  { ignores: ["**/node_modules", "**/dist", "build/**", "manifests/**", ".bulwark/**"] },
  js.configs.recommended,
  ...tsPlugin.configs["flat/recommended"],
  {
    files: ["**/*.ts"],
    languageOptions: {
      parser: tsParser,
      parserOptions: { projectService: true, tsconfigRootDir, sourceType: "module" },
      globals: { ...globals.node },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": [
        "error",
        {
          allowForKnownSafeCalls: [
            { from: "package", package: "node:test", name: ["describe", "it", "test", "suite"] },
          ],
        },
      ],
      "@typescript-eslint/no-explicit-any": "error",
      complexity: ["error", 12],
      "max-depth": ["error", 3],
      "max-params": ["error", 4],
    },
  },
  {
    // CommonJS launchers (bin/) run as plain Node scripts.
    files: ["**/*.js"],
    languageOptions: { sourceType: "commonjs", globals: { ...globals.node } },
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
  {
    // Tests read best as flat tables of assertions; optional chains count as branches.
    files: ["**/*.test.ts"],
    rules: { complexity: "off" },
  },
  {
    // core/ is pure and bundled into the module Secret (1 MiB): no I/O libraries, no Pepr.
    // Its tests are never bundled and may read fixtures from disk.
    files: ["core/**/*.ts"],
    ignores: ["core/**/*.test.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            "pepr",
            "kubernetes-fluent-client",
            "@kubernetes/client-node",
            "express",
            "winston",
            "undici",
            "node:fs*",
            "node:net",
            "node:http*",
          ],
        },
      ],
    },
  },
];
