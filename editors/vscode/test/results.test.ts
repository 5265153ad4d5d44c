import * as assert from "node:assert/strict";
import { test } from "node:test";

import { panelContent, panelHtml, panelTitle } from "../src/results";

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

test("evalspec's report, whose policy pins its one script by hash, keeps its policy and gets scripts", () => {
  const page = `<!doctype html><html><head><meta charset="utf-8">` +
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'sha256-abc='; ` +
    `style-src 'unsafe-inline'; img-src data:; connect-src 'none'"></head><body><script>1</script></body></html>`;
  assert.deepEqual(panelContent(page, "x:"), { html: page, scripts: true });
});

test("a page that allows inline scripts, or has no policy, runs none", () => {
  const loose = `<html><head><meta http-equiv="Content-Security-Policy" content="default-src 'none'; ` +
    `script-src 'sha256-abc=' 'unsafe-inline'"></head><body></body></html>`;
  const got = panelContent(loose, "x:");
  assert.equal(got.scripts, false);
  assert.match(got.html, /script-src 'none'/);
  assert.equal(panelContent("<p>plain</p>", "x:").scripts, false);
});
