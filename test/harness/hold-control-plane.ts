// Used by the process-lifecycle test: starts a control plane, prints the PIDs of its processes
// as one JSON line, then waits to be killed.
import { startControlPlane } from "../../hack/control-plane/control-plane";

const [dir, binDir] = process.argv.slice(2);
if (!dir || !binDir) throw new Error("usage: hold-control-plane.ts DIR BIN_DIR");
startControlPlane({ dir, binDir }).then(
  cp => {
    console.log(JSON.stringify({ pids: cp.processes.map(p => p.pid) }));
    setInterval(() => {}, 1 << 30);
  },
  error => {
    console.error(error);
    process.exit(1);
  },
);
