/**
 * `tskernel/ts-plugin`, the TypeScript language-service plugin: with `"plugins": [{ "name": "tskernel/ts-plugin" }]`
 * in tsconfig.json, every editor that uses tsserver shows tskernel's diagnostics of kernel files as they are
 * edited (editor-service.ts does the work). tsserver loads plugins with `require`, so this entry is CommonJS,
 * and it loads the rest (ES modules) with `import()`, which starts the compile worker: until its compiler is
 * loaded (about half a second) the project's diagnostics are TypeScript's alone, and then the plugin asks
 * tsserver to check the open files again, so that editors refresh them.
 */

import type ts from "typescript";

type EditorService = import("./editor-service.ts").EditorService;

function init(modules: { typescript: typeof ts }): ts.server.PluginModule {
  const typescript = modules.typescript;
  return {
    create(info: ts.server.PluginCreateInfo): ts.LanguageService {
      let service: EditorService | undefined;
      import("./editor-service.ts")
        .then((module) => module.createEditorService(typescript, info))
        .then(
          (created) => {
            service = created;
            info.project.refreshDiagnostics();
          },
          (error: unknown) => info.project.projectService.logger.info(`tskernel: the plugin could not load the compiler: ${String(error)}`),
        );
      // Every method of the project's language service, with the semantic diagnostics extended by ours.
      const languageService = info.languageService;
      const proxy = Object.create(null) as ts.LanguageService;
      for (const name of Object.keys(languageService) as (keyof ts.LanguageService)[]) {
        const method = languageService[name] as unknown as (...args: unknown[]) => unknown;
        (proxy as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => method.apply(languageService, args);
      }
      // Ours start first (in the compile worker), TypeScript's run meanwhile, then ours are collected.
      proxy.getSemanticDiagnostics = (fileName: string) => {
        const ours = service?.begin(fileName);
        const typescriptOwn = languageService.getSemanticDiagnostics(fileName);
        return [...typescriptOwn, ...(ours?.() ?? [])];
      };
      return proxy;
    },
  };
}

export = init;
