/**
 * A browser script bundled by esbuild into one IIFE and wrapped in a TypeScript module that
 * exports it as a string, which the Worker serves as a file of its own (the console's CSP allows
 * only its own script files). Used by scripts/build-console-script.ts and build-passkey-script.ts.
 */
import { build } from "esbuild";

export interface BrowserBundle {
  source: string;
  /** The exported constant's name. */
  exportName: string;
  /** Comment lines at the top of the generated module (where it comes from, how to rebuild it). */
  header: string[];
  minify: boolean;
  /** Module paths in an unminified bundle are named from here: the same file from any directory. */
  absWorkingDir?: string;
}

/** The generated module's text. */
export async function browserBundleModule(bundle: BrowserBundle): Promise<string> {
  const result = await build({
    entryPoints: [bundle.source],
    ...(bundle.absWorkingDir ? { absWorkingDir: bundle.absWorkingDir } : {}),
    bundle: true,
    minify: bundle.minify,
    format: "iife",
    target: "es2020",
    write: false,
    legalComments: "none",
    logLevel: "warning",
  });
  const code = result.outputFiles[0]!.text;
  return [...bundle.header.map((line) => `// ${line}`), `export const ${bundle.exportName} = ${JSON.stringify(code)};`, ""].join("\n");
}
