/**
 * `tskernel/plugin/rollup`: the bundler plugin (index.ts) for Rollup: `plugins: [tskernel()]` in rollup.config.js. Its own entry, so that
 * `import tskernel from "tskernel/plugin/rollup"` reads as the plugins of other packages do.
 */

import type { Plugin } from "rollup";
import { tskernelPlugin, type TskernelPluginOptions } from "./index.ts";

export type { TskernelPluginOptions } from "./index.ts";

export default function tskernel(options?: TskernelPluginOptions): Plugin {
  return tskernelPlugin.rollup(options) as Plugin;
}
