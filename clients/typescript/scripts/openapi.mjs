// Write openapi.json from the server itself: `sagewai serve --openapi` prints the schema.
// The Python used is $SAGEWAI_PYTHON, else the repository's .venv, else python3.
import { execFileSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
export function python() {
  const venv = path.resolve(here, "../../../.venv/bin/python");
  return process.env.SAGEWAI_PYTHON || (existsSync(venv) ? venv : "python3");
}

export function schema() {
  return execFileSync(python(), ["-m", "sagewai", "serve", "--openapi"], { encoding: "utf8" });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(path.resolve(here, "../openapi.json"), schema());
  console.log("wrote openapi.json; run `npm run generate` for src/schema.ts");
}
