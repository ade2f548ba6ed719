// The gateway's data plane for corpus runs: every request of every host goes to a recording
// backend, a new one per case, so that no pooled upstream connection carries one case's bytes
// into the next (the old backend's connections close when the new view is applied).
import { startDataPlane, type DataPlane } from "../../gateway/data-plane";
import { endpointSlice, ingress, view } from "../../gateway/routing/testkit";
import { RecordingBackend, type LlhttpRecorder } from "./llhttp-recorder";

export class CasePlane {
  private version = 0;

  private constructor(
    readonly plane: DataPlane,
    private readonly recorder: LlhttpRecorder,
  ) {}

  static async start(recorder: LlhttpRecorder): Promise<CasePlane> {
    const plane = await startDataPlane({ httpPort: 0, host: "127.0.0.1", defaultCertificates: [] });
    return new CasePlane(plane, recorder);
  }

  get port(): number {
    return this.plane.httpPort;
  }

  /** A fresh backend, served for every host and path from now on. */
  async nextBackend(): Promise<RecordingBackend> {
    const backend = await RecordingBackend.start(this.recorder);
    const slice = endpointSlice({
      service: "echo",
      ports: [{ port: backend.port }],
      endpoints: [{ address: "127.0.0.1" }],
    });
    const all = ingress({ name: "all", rules: [{ paths: [{ path: "/", service: "echo" }] }] });
    await this.plane.apply(view(++this.version, [all], [slice]));
    return backend;
  }

  close(): Promise<void> {
    return this.plane.close({ drainMs: 100 });
  }
}
