// Fail when the committed openapi.json or src/schema.ts is not what the server and
// openapi-typescript make today (run `npm run openapi && npm run generate` to refresh both).
import { execFileSync } from "node:child_process";
import { readFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import path from "node:path";
import { schema } from "./openapi.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const committed = readFileSync(path.join(root, "openapi.json"), "utf8");
if (JSON.stringify(JSON.parse(committed)) !== JSON.stringify(JSON.parse(schema()))) {
  console.error("openapi.json is out of date: run `npm run openapi && npm run generate`");
  process.exit(1);
}
const out = path.join(mkdtempSync(path.join(tmpdir(), "sagewai-schema-")), "schema.ts");
const bin = path.join(root, "node_modules", ".bin", "openapi-typescript");
execFileSync(bin, [path.join(root, "openapi.json"), "--default-non-nullable", "false", "--output", out], {
  stdio: "ignore",
});
if (readFileSync(out, "utf8") !== readFileSync(path.join(root, "src", "schema.ts"), "utf8")) {
  console.error("src/schema.ts is out of date: run `npm run generate`");
  process.exit(1);
}
console.log("openapi.json and src/schema.ts are current");
