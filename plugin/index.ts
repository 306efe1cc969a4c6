/**
 * The bundler plugin, `tskernel/plugin`: one plugin for Vite, esbuild and Rollup (written once on unplugin)
 * that compiles kernel files at build time. An app's `import { saxpy } from "./saxpy.kernel.ts"` gets a
 * module with the kernel's WGSL and its launch description, on `tskernel/webgpu` (codegen.ts prints it); no
 * compiler code reaches the bundle. Compile errors are the bundler's errors, coded and located at the
 * kernel's TypeScript with a code frame (Vite shows them in its overlay), and a kernel's helper files are
 * watched, so an edit to either recompiles it (in `vite dev`, the module is invalidated and reloaded).
 */

import { createUnplugin, type UnpluginInstance } from "unplugin";
import { createProject } from "../compiler/index.ts";
import { kernelModule, type BundlerMessage } from "./codegen.ts";

export { runtimeModule } from "./codegen.ts";

export interface TskernelPluginOptions {
  /**
   * Which modules are kernel files, by their absolute path: a regular expression or a test. Default: names
   * ending in `.kernel.ts` (also `.kernel.mts`, `.kernel.cts`).
   */
  readonly include?: RegExp | ((file: string) => boolean);
  /** Values of compile-time constants, as `tskernel build --define NAME=VALUE` (every kernel with that constant). */
  readonly defines?: Readonly<Record<string, string | number | boolean>>;
  /**
   * Paths in diagnostics and each kernel's `source` are relative to this directory. Default: Vite's root,
   * esbuild's `absWorkingDir`, else the current directory.
   */
  readonly root?: string;
}

const defaultInclude = /\.kernel\.[cm]?ts$/;

/** The plugin for every bundler unplugin supports; `vite`, `esbuild` and `rollup` are the ones tskernel tests. */
export const tskernelPlugin: UnpluginInstance<TskernelPluginOptions | undefined, false> = createUnplugin<TskernelPluginOptions | undefined, false>((options = {}, meta) => {
  const include = options.include ?? defaultInclude;
  const isKernel = (id: string) => !id.includes("?") && !id.startsWith("\0") && (typeof include === "function" ? include(id) : include.test(id));
  const defines = new Map(Object.entries(options.defines ?? {}).map(([name, value]) => [name, String(value)]));
  let root = options.root ?? process.cwd();
  // One compiler project for the life of the build or dev server: recompiles after an edit are warm.
  let project: ReturnType<typeof createProject> | undefined;
  // esbuild shows no code frame of a plugin's own, so its messages carry the CLI's whole text. Columns in
  // `loc` are 0-based, as Rollup's and esbuild's APIs define them (the diagnostics print them 1-based).
  const forEsbuild = meta.framework === "esbuild";
  const toBundler = (message: BundlerMessage) => ({
    message: forEsbuild ? message.rendered : message.message,
    ...(message.loc ? { id: message.loc.file, loc: { file: message.loc.file, line: message.loc.line, column: message.loc.column - 1 } } : {}),
    ...(message.frame && !forEsbuild ? { frame: message.frame } : {}),
    pluginCode: message.code,
  });

  return {
    name: "tskernel",
    enforce: "pre",
    transformInclude: isKernel,
    transform(_code, id) {
      project ??= createProject();
      const result = kernelModule(id, { root, defines, project });
      for (const file of result.watchFiles) this.addWatchFile(file);
      for (const warning of result.warnings) (this as unknown as { warn(w: unknown): void }).warn(toBundler(warning));
      if (!result.ok) {
        // Rollup and Vite throw here; esbuild collects the error and fails the build once the hook returns.
        (this as unknown as { error(e: unknown): never }).error(toBundler(result.errors[0]!));
        return null;
      }
      return { code: result.code, map: null };
    },
    vite: {
      configResolved(config) {
        if (options.root === undefined) root = config.root;
      },
    },
    esbuild: {
      config(buildOptions) {
        if (options.root === undefined && buildOptions.absWorkingDir) root = buildOptions.absWorkingDir;
      },
      // esbuild asks every plugin about every file unless told which: only kernel files concern this one.
      onLoadFilter: typeof include === "function" ? undefined : include,
    },
  };
});

/** The Vite plugin: `plugins: [tskernel()]` in vite.config.ts. */
export const vite = tskernelPlugin.vite;
/** The esbuild plugin: `plugins: [tskernel()]` in esbuild's build options. */
export const esbuild = tskernelPlugin.esbuild;
/** The Rollup plugin: `plugins: [tskernel()]` in rollup.config.js. */
export const rollup = tskernelPlugin.rollup;
