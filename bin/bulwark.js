#!/usr/bin/env node
// The `bulwark` command: runs the TypeScript CLI through tsx's require hook.
require("tsx/cjs/api").register();
require("../cli/main.ts").run();
