import * as assert from "node:assert/strict";
import { test } from "node:test";

import { ProgressHost, ProgressValue, Reporter, ServerProgress } from "../src/progress";

function host() {
  const shown: Array<{ options: { notification: boolean; title: string; cancellable: boolean }; reports: unknown[];
    cancel: () => void; finished: boolean }> = [];
  const handlers = new Map<string | number, (value: ProgressValue) => void>();
  const cancelled: Array<string | number> = [];
  const fake: ProgressHost = {
    withProgress: (options, task) => {
      const entry = { options, reports: [] as unknown[], cancel: () => {}, finished: false };
      shown.push(entry);
      const progress: Reporter = { report: (value) => entry.reports.push(value) };
      let listener: () => void = () => {};
      entry.cancel = () => listener();
      void task(progress, { onCancellationRequested: (l) => { listener = l; return { dispose() {} }; } })
        .then(() => { entry.finished = true; });
    },
    onProgress: (token, handler) => {
      handlers.set(token, handler);
      return { dispose: () => handlers.delete(token) };
    },
    cancel: (token) => cancelled.push(token),
  };
  return { fake, shown, handlers, cancelled };
}

test("a cancellable run's progress is a notification whose Cancel reaches the server", async () => {
  const { fake, shown, handlers, cancelled } = host();
  const done: ServerProgress[] = [];
  new ServerProgress(fake, "evalspec-run-1", (p) => done.push(p));
  handlers.get("evalspec-run-1")!({ kind: "begin", title: "evalspec: running greet", cancellable: true,
    message: "starting", percentage: 0 });
  assert.deepEqual(shown[0].options, { notification: true, title: "evalspec: running greet", cancellable: true });
  handlers.get("evalspec-run-1")!({ kind: "report", message: "1/4 done", percentage: 25 });
  handlers.get("evalspec-run-1")!({ kind: "report", message: "2/4 done", percentage: 50 });
  assert.deepEqual(shown[0].reports, [{ message: "starting", increment: 0 }, { message: "1/4 done", increment: 25 },
    { message: "2/4 done", increment: 25 }]);
  shown[0].cancel();  // the user clicks Cancel
  assert.deepEqual(cancelled, ["evalspec-run-1"]);
  handlers.get("evalspec-run-1")!({ kind: "end", message: "cancelled" });
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(shown[0].finished, true);
  assert.equal(handlers.size, 0);
  assert.equal(done.length, 1);
});

test("progress that cannot be cancelled stays in the status bar; an end before the begin shows nothing", async () => {
  const { fake, shown, handlers } = host();
  new ServerProgress(fake, 7);
  handlers.get(7)!({ kind: "begin", title: "indexing", message: "a" });
  assert.deepEqual(shown[0].options, { notification: false, title: "indexing", cancellable: false });
  assert.deepEqual(shown[0].reports, [{ message: "a" }]);
  new ServerProgress(fake, 8);
  handlers.get(8)!({ kind: "end" });
  assert.equal(handlers.has(8), false);
  assert.equal(shown.length, 1);
});
