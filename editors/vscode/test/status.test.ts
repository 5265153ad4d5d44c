import * as assert from "node:assert/strict";
import { test } from "node:test";

import { CANCEL_COMMAND, RESULTS_COMMAND, RunStatus } from "../src/status";

class FakeItem {
  text = "";
  tooltip: unknown = undefined;
  command: unknown = undefined;
  visible = false;
  show(): void {
    this.visible = true;
  }
  hide(): void {
    this.visible = false;
  }
}

test("a running run shows its progress and clicking cancels it", () => {
  const item = new FakeItem();
  const status = new RunStatus(item);
  status.setActive("file:///a.weval.yml");
  assert.equal(item.visible, false);
  status.update({ uri: "file:///a.weval.yml", running: true, done: 3, total: 10, errors: 1 });
  assert.equal(item.visible, true);
  assert.equal(item.text, "$(sync~spin) evalspec 3/10, 1 error(s)");
  assert.equal(item.command, CANCEL_COMMAND);
});

test("after the run the last mean stays, and clicking opens the results", () => {
  const item = new FakeItem();
  const status = new RunStatus(item);
  status.setActive("file:///a.weval.yml");
  status.update({ uri: "file:///a.weval.yml", running: true, done: 0, total: 2 });
  status.update({ uri: "file:///a.weval.yml", running: false, done: 2, total: 2, mean: 0.75 });
  assert.equal(item.text, "$(beaker) evalspec mean 0.75");
  assert.equal(item.command, RESULTS_COMMAND);
  // A later state without a mean (a new run starting and being refused) keeps the known mean.
  status.update({ uri: "file:///a.weval.yml", running: false });
  assert.equal(item.text, "$(beaker) evalspec mean 0.75");
  status.update({ uri: "file:///a.weval.yml", running: false, mean: null });
  assert.equal(item.text, "$(beaker) evalspec nothing scored");
});

test("the item follows the active editor", () => {
  const item = new FakeItem();
  const status = new RunStatus(item);
  status.update({ uri: "file:///a.weval.yml", running: true, total: 4, done: 1 });
  status.setActive("file:///b.weval.yml");
  assert.equal(item.visible, false);
  status.setActive("file:///a.weval.yml");
  assert.equal(item.visible, true);
  assert.equal(item.text, "$(sync~spin) evalspec 1/4");
});
