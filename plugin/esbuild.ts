/**
 * `tskernel/plugin/esbuild`: the bundler plugin (index.ts) for esbuild: `plugins: [tskernel()]` in the options of `esbuild.build`. Its own entry, so that
 * `import tskernel from "tskernel/plugin/esbuild"` reads as the plugins of other packages do.
 */

import type { Plugin } from "esbuild";
import { tskernelPlugin, type TskernelPluginOptions } from "./index.ts";

export type { TskernelPluginOptions } from "./index.ts";

export default function tskernel(options?: TskernelPluginOptions): Plugin {
  return tskernelPlugin.esbuild(options) as Plugin;
}
