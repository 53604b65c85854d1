// Minifies a stylesheet for the site, the way cargo-leptos did: lightningcss
// (the same library its Rust side uses), browser targets from the
// browserslist query "defaults" (the project's `browserquery`).
//
//   node tools/minify-css.mjs IN.css OUT.css
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { transform, browserslistToTargets } = require("lightningcss");
const browserslist = require("browserslist");

const [input, output] = process.argv.slice(2);
if (!input || !output) {
  console.error("usage: node tools/minify-css.mjs IN.css OUT.css");
  process.exit(2);
}
const { code, warnings } = transform({
  filename: input,
  code: readFileSync(input),
  minify: true,
  targets: browserslistToTargets(browserslist("defaults")),
});
for (const w of warnings) console.error(`${input}: ${w.message}`);
writeFileSync(output, code);
