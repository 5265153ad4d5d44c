import * as assert from "node:assert/strict";
import { test } from "node:test";

import { panelHtml, panelTitle } from "../src/results";

test("the report panel forbids scripts and remote loads", () => {
  const html = panelHtml("<html><head><title>r</title></head><body><script>alert(1)</script></body></html>",
    "vscode-resource:");
  const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]*)">/.exec(html);
  assert.ok(csp, html);
  assert.match(csp![1], /default-src 'none'/);
  assert.match(csp![1], /script-src 'none'/);
  assert.ok(html.indexOf("Content-Security-Policy") < html.indexOf("<title>"), "the policy comes first in <head>");
});

test("a fragment without <head> still gets the policy", () => {
  const html = panelHtml("<p>hi</p>", "x:");
  assert.match(html, /^<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy"/);
});

test("the panel is titled after the report file", () => {
  assert.equal(panelTitle("/r/live/blueprints/b/abc_report.html"), "evalspec: abc_report.html");
});
