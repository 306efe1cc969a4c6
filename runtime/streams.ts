/**
 * What every backend's streams share: the checks that a launch's stream, or an event waited for, belongs to
 * the device (another device's is refused, not ignored), and the streams of a device with a single queue (the
 * CPU, WebGPU). There everything enqueued runs in order, so a stream is another name for that queue, waiting
 * for an event has nothing to wait for, and an event is a point in the queue: code written for CUDA's streams
 * runs unchanged on every backend. CUDA's own streams are in cuda/cuda-streams.ts.
 */

import type { BackendName, Stream, StreamEvent } from "./device.ts";
import { LaunchError } from "./launch-check.ts";

/** What a single-queue device offers its streams. */
export interface SingleQueue {
  readonly backend: BackendName;
  /** A point after everything enqueued so far. */
  eventNow(): StreamEvent;
  /** Waits for everything enqueued so far; raises the device's pending errors. */
  synchronize(): Promise<void>;
}

/** The devices' streams and events carry their owner, so that a launch can refuse another device's. */
const owners = new WeakMap<object, object>();

export function ownedBy<T extends object>(value: T, owner: object): T {
  owners.set(value, owner);
  return value;
}

/** Throws unless `stream` (when given) was made by `owner` and is not disposed. */
export function checkStream(stream: Stream | undefined, owner: object, kernel: string, disposed: (stream: Stream) => boolean): void {
  if (stream === undefined) return;
  if (typeof stream !== "object" || stream === null || (stream as { kind?: unknown }).kind !== "tskernel.stream") {
    throw new LaunchError(kernel, "the launch's stream must be one that device.createStream() made");
  }
  if (owners.get(stream) !== owner) throw new LaunchError(kernel, `the stream belongs to another device (a ${stream.backend} stream)`);
  if (disposed(stream)) throw new LaunchError(kernel, "the stream was disposed");
}

/** Throws unless `event` was recorded on a stream of `owner`. */
export function checkEvent(event: StreamEvent, owner: object): void {
  if (typeof event !== "object" || event === null || (event as { kind?: unknown }).kind !== "tskernel.event" || owners.get(event) !== owner) {
    throw new TypeError("tskernel: waitEvent expects an event recorded on a stream of the same device (stream.recordEvent())");
  }
}

/** A stream of a single-queue device. */
export class SingleQueueStream implements Stream {
  readonly kind = "tskernel.stream" as const;
  private disposedFlag = false;

  constructor(
    private readonly queue: SingleQueue,
    private readonly owner: object,
  ) {
    ownedBy(this, owner);
  }

  get backend(): BackendName {
    return this.queue.backend;
  }

  get disposed(): boolean {
    return this.disposedFlag;
  }

  recordEvent(): StreamEvent {
    this.assertOpen();
    return ownedBy(this.queue.eventNow(), this.owner);
  }

  /** Nothing to wait for: the one queue runs the event's work before anything enqueued after this call. */
  waitEvent(event: StreamEvent): void {
    this.assertOpen();
    checkEvent(event, this.owner);
  }

  synchronize(): Promise<void> {
    return this.queue.synchronize();
  }

  dispose(): void {
    this.disposedFlag = true;
  }

  private assertOpen(): void {
    if (this.disposedFlag) throw new Error("tskernel: the stream was disposed");
  }
}
