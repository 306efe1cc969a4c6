/**
 * Kernels compiled at build time by the bundler plugin (`tskernel/plugin`), as a web app imports them: the
 * plugin replaces a kernel file with a module that calls `compiledKernel` once per kernel, with the WGSL and
 * the manifest's description of each specialization. The value keeps the shape TypeScript gives the kernel
 * in its source (`Kernel<F>` from "tskernel"), so the app's type-check sees the kernel's own signature, and
 * `launcher(device, saxpy)` turns that signature into the launch's argument types. Browser-safe: no Node,
 * no compiler (the browser entry re-exports this file).
 */

import type { Kernel, KernelOptions, NumericVector } from "../../compiler/lang/index.ts";
import type { ManifestKernel, ManifestLayout } from "../../compiler/lang/manifest.ts";
import type { Device, DeviceBuffer, Dim3, KernelArg, KernelHandle, Timing, TimingOptions } from "../device.ts";
import { KernelLibrary } from "../library.ts";

/**
 * One specialization of a kernel as the plugin emits it: its manifest description and its WGSL entry point,
 * absent when the kernel's `targets` leave out wgsl (a launch then says so, naming them).
 */
export interface CompiledSpecialization {
  readonly description: ManifestKernel;
  readonly entryPoint?: string;
}

/** The value a kernel file's export has once the plugin built it. */
export interface CompiledKernel<F extends (...args: never[]) => void = (...args: never[]) => void> extends Kernel<F> {
  /** Every specialization the build made, the default one first. */
  readonly specializations: readonly KernelHandle[];
}

/**
 * What a launch passes for a kernel parameter of TypeScript type T: a device buffer for an array (of numbers,
 * vectors or structs), else the value: a number, a boolean, a vector as its lanes, a struct as its fields.
 */
export type LaunchArg<T> = T extends ArrayLike<unknown> ? DeviceBuffer : T extends boolean ? boolean : T extends number ? number : T extends object ? LaunchValue<T> : never;

/**
 * A vector or struct argument as the runtime takes it (docs/runtime.md, "Buffers of vectors and structs"): a
 * vector as an array of its lanes or an object of them (`{ x, y, z }`), a struct as an object of its fields.
 */
export type LaunchValue<T> = T extends number
  ? number
  : T extends NumericVector
    ? readonly number[] | { readonly [K in Extract<keyof T, "x" | "y" | "z" | "w">]: number }
    : { readonly [K in keyof T]: LaunchValue<T[K]> };

/**
 * The run-time arguments of a kernel, in order, from its parameter list: `Const<…>` parameters (the ones with
 * a default, whose type admits `undefined`) are compile-time constants and are left out.
 */
export type LaunchArgs<P extends readonly unknown[]> = number extends P["length"]
  ? readonly KernelArg[] // not a fixed parameter list (a kernel typed loosely): nothing to check at compile time
  : P extends readonly []
    ? []
    : P extends readonly [infer Head, ...infer Rest]
      ? undefined extends Head
        ? LaunchArgs<Rest>
        : [LaunchArg<Head>, ...LaunchArgs<Rest>]
      : P extends readonly [(infer _Optional)?, ...infer Rest]
        ? LaunchArgs<Rest>
        : [];

/** A launch of a kernel with its typed arguments. */
export interface TypedLaunchOptions<F extends (...args: never[]) => void> {
  readonly grid: Dim3;
  /** Required unless the kernel fixes its block shape (then it may be omitted, or must match). */
  readonly block?: Dim3;
  readonly args: LaunchArgs<Parameters<F>>;
}

/**
 * A kernel bound to a device: call it to launch (device.launch: the promise resolves once the launch is
 * enqueued, in the device's batch on WebGPU); `time` times launches; `handle` has the WGSL and the description.
 */
export interface KernelLauncher<F extends (...args: never[]) => void> {
  (options: TypedLaunchOptions<F>): Promise<void>;
  time(options: TypedLaunchOptions<F>, timing?: TimingOptions): Promise<Timing>;
  readonly handle: KernelHandle;
}

function notHere(name: string): never {
  throw new Error(`tskernel: kernel '${name}' runs on a device: launch it with launcher(device, ${name}) from "tskernel/webgpu"`);
}

/**
 * Called by the code the plugin generates (one call per kernel of a file): the kernel's specializations,
 * the WGSL module they share, and for each WGSL line the TypeScript location it came from.
 */
export function compiledKernel(specializations: readonly CompiledSpecialization[], wgsl: string, lineSources: readonly (string | null)[]): CompiledKernel {
  const first = specializations[0]!.description;
  const handles = specializations.map(({ description, entryPoint }): KernelHandle => ({
    description,
    ...(entryPoint !== undefined ? { wgsl: { source: wgsl, entryPoint, lineSources: lineSources.map((s) => s ?? undefined) } } : {}),
  }));
  const options: KernelOptions = {
    ...(first.block ? { block: first.block } : {}),
    specializations: specializations.map((s) => s.description.specialization as NonNullable<KernelOptions["specializations"]>[number]),
    ...(first.declaredTargets ? { targets: first.declaredTargets } : {}),
  };
  return { kind: "tskernel.kernel", name: first.name, fn: () => notHere(first.name), options, specializations: handles };
}

/**
 * The compiled specialization of a kernel imported through the plugin (with `specialization`, the one with
 * those constant values; without, the default): its manifest description and its WGSL. A kernel imported
 * from its TypeScript source without the plugin has none, which is an error saying so.
 */
export function kernelHandle(kernel: Kernel<(...args: never[]) => void>, specialization: Readonly<Record<string, number | boolean>> = {}): KernelHandle {
  const handles = (kernel as Partial<CompiledKernel>).specializations;
  if (!handles) {
    throw new Error(
      `tskernel: kernel '${kernel.name}' was imported from its TypeScript source, which only the compiler reads: build the app with the tskernel bundler plugin (tskernel/plugin/vite, tskernel/plugin/esbuild or tskernel/plugin/rollup)`,
    );
  }
  return new KernelLibrary(handles).get(kernel.name, specialization);
}

/**
 * The layout of a vector or struct type that a kernel imported through the plugin takes
 * (`layoutOf(step, "Particle")`), for `device.createBuffer(layout, …)` and packStructs/unpackStructs; as
 * `library.layout(name)`, over the kernel's parameters.
 */
export function layoutOf(kernel: Kernel<(...args: never[]) => void>, name: string): ManifestLayout {
  kernelHandle(kernel); // the error for a kernel imported without the plugin
  return new KernelLibrary((kernel as CompiledKernel).specializations).layout(name);
}

/**
 * A launcher for a kernel on a device, typed from the kernel's TypeScript signature: arrays are buffers,
 * scalars numbers or booleans, in parameter order, without the compile-time constants. The device still
 * checks every argument at run time (element types, lengths, the block) as `device.launch` does.
 */
export function launcher<F extends (...args: never[]) => void>(
  device: Device,
  kernel: Kernel<F>,
  specialization: Readonly<Record<string, number | boolean>> = {},
): KernelLauncher<F> {
  const handle = kernelHandle(kernel, specialization);
  const options = (launch: TypedLaunchOptions<F>) => ({ grid: launch.grid, block: launch.block, args: launch.args as readonly KernelArg[] });
  const launch = (launchOptions: TypedLaunchOptions<F>) => device.launch(handle, options(launchOptions));
  return Object.assign(launch, {
    time: (launchOptions: TypedLaunchOptions<F>, timing?: TimingOptions) => device.time(handle, options(launchOptions), timing),
    handle,
  });
}
