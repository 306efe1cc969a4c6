/**
 * CUDA streams and events (device.createStream()). A stream is created blocking (CU_STREAM_DEFAULT), so the
 * device's own queue, CUDA's legacy default stream, stays ordered with it: launches without a stream, reads,
 * writes and frees wait for the streams' earlier work, and the streams' later work waits for them. Two
 * streams made here run independently unless an event orders them (`b.waitEvent(a.recordEvent())`). Events
 * are created without timing (CU_EVENT_DISABLE_TIMING, the cheap kind) and destroyed when the garbage
 * collector drops them. A fault met while waiting for a stream or an event is the ledger's, as a device-wide
 * synchronize's is (cuda-device.ts).
 */

import type { Stream, StreamEvent } from "../device.ts";
import { checkEvent, ownedBy } from "../streams.ts";
import type { DriverApi } from "./cuda-api.ts";
import { check } from "./cuda-api.ts";

/** What streams need of their device. */
export interface StreamHost {
  readonly cu: DriverApi;
  /** Turns the status of a call that waited for work into success, or the ledger's failure (thrown). */
  settleWait(call: string, status: number, everything: boolean): void;
}

const CU_STREAM_DEFAULT = 0;
const CU_EVENT_DISABLE_TIMING = 2;
const CUDA_ERROR_NOT_READY = 600;

const events = new FinalizationRegistry<{ cu: DriverApi; handle: unknown }>(({ cu, handle }) => {
  cu.cuEventDestroy_v2(handle);
});

export class CudaStream implements Stream {
  readonly kind = "tskernel.stream" as const;
  readonly backend = "cuda" as const;
  readonly handle: unknown;
  private disposedFlag = false;

  constructor(
    private readonly host: StreamHost,
    private readonly owner: object,
  ) {
    const out: unknown[] = [null];
    check("cuStreamCreate", host.cu.cuStreamCreate(out, CU_STREAM_DEFAULT));
    this.handle = out[0];
    ownedBy(this, owner);
  }

  get disposed(): boolean {
    return this.disposedFlag;
  }

  recordEvent(): StreamEvent {
    this.assertOpen();
    return recordEvent(this.host, this.owner, this.handle);
  }

  waitEvent(event: StreamEvent): void {
    this.assertOpen();
    checkEvent(event, this.owner);
    check("cuStreamWaitEvent", this.host.cu.cuStreamWaitEvent(this.handle, (event as CudaEvent).handle, 0));
  }

  async synchronize(): Promise<void> {
    this.assertOpen();
    this.host.settleWait("cuStreamSynchronize", this.host.cu.cuStreamSynchronize(this.handle), false);
  }

  /** cuStreamDestroy returns at once; CUDA releases the stream once its work is done. */
  dispose(): void {
    if (this.disposedFlag) return;
    this.disposedFlag = true;
    check("cuStreamDestroy", this.host.cu.cuStreamDestroy_v2(this.handle));
  }

  private assertOpen(): void {
    if (this.disposedFlag) throw new Error("tskernel: the stream was disposed");
  }
}

/** An event recorded on `stream` (null: the legacy default stream). */
export function recordEvent(host: StreamHost, owner: object, stream: unknown): CudaEvent {
  const out: unknown[] = [null];
  check("cuEventCreate", host.cu.cuEventCreate(out, CU_EVENT_DISABLE_TIMING));
  const event = new CudaEvent(host, out[0]);
  events.register(event, { cu: host.cu, handle: out[0] });
  check("cuEventRecord", host.cu.cuEventRecord(out[0], stream));
  return ownedBy(event, owner);
}

export class CudaEvent implements StreamEvent {
  readonly kind = "tskernel.event" as const;

  constructor(
    private readonly host: StreamHost,
    readonly handle: unknown,
  ) {}

  /** cuEventQuery: NOT_READY is "not yet"; a fault counts as done (synchronize then raises it). */
  done(): boolean {
    return this.host.cu.cuEventQuery(this.handle) !== CUDA_ERROR_NOT_READY;
  }

  async synchronize(): Promise<void> {
    this.host.settleWait("cuEventSynchronize", this.host.cu.cuEventSynchronize(this.handle), false);
  }
}
