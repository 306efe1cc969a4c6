/**
 * `tskernel/plugin/vite`: the bundler plugin (index.ts) for Vite: `plugins: [tskernel()]` in vite.config.ts. Its own entry, so that
 * `import tskernel from "tskernel/plugin/vite"` reads as the plugins of other packages do.
 */

import type { Plugin } from "vite";
import { tskernelPlugin, type TskernelPluginOptions } from "./index.ts";

export type { TskernelPluginOptions } from "./index.ts";

export default function tskernel(options?: TskernelPluginOptions): Plugin {
  return tskernelPlugin.vite(options) as Plugin;
}
