// The server's work-done progress (LSP `window/workDoneProgress/create` + `$/progress`) shown by VS Code.
// vscode-languageclient shows every server progress in the status bar only, with no Cancel button; a
// run's progress is cancellable, so it is shown here as a notification with Cancel (which sends
// `window/workDoneProgress/cancel`: the server stops the run and keeps what finished). Progress that
// cannot be cancelled stays in the status bar. Registered as a client feature after the built-in ones,
// so its handler for the create request is the one used.

export interface ProgressValue {
  kind: "begin" | "report" | "end";
  title?: string;
  message?: string;
  percentage?: number;
  cancellable?: boolean;
}

export interface Reporter {
  report(value: { message?: string; increment?: number }): void;
}

export interface CancelToken {
  onCancellationRequested(listener: () => void): { dispose(): void };
}

/** What this needs of VS Code's window and the language client (stubbed in the tests). */
export interface ProgressHost {
  /** window.withProgress with a notification (cancellable) or the status bar. */
  withProgress(
    options: { notification: boolean; title: string; cancellable: boolean },
    task: (progress: Reporter, token: CancelToken) => Promise<void>,
  ): void;
  onProgress(token: string | number, handler: (value: ProgressValue) => void): { dispose(): void };
  cancel(token: string | number): void;
}

/** One progress token: begun, reported, ended by the server; cancelled by the user. */
export class ServerProgress {
  private reporter: Reporter | undefined;
  private finish: (() => void) | undefined;
  private reported = 0;
  private ended = false;
  private readonly subscription: { dispose(): void };

  constructor(private readonly host: ProgressHost, private readonly token: string | number,
    private readonly done?: (part: ServerProgress) => void) {
    this.subscription = host.onProgress(token, (value) => this.on(value));
  }

  private on(value: ProgressValue): void {
    if (value.kind === "begin") {
      this.begin(value);
    } else if (value.kind === "report") {
      this.report(value);
    } else {
      this.end();
    }
  }

  private begin(value: ProgressValue): void {
    if (this.ended) {
      return;
    }
    const cancellable = value.cancellable === true;
    this.host.withProgress({ notification: cancellable, title: value.title ?? "evalspec", cancellable },
      (progress, cancel) => {
        if (this.ended) {
          return Promise.resolve();
        }
        this.reporter = progress;
        const listener = cancel.onCancellationRequested(() => this.host.cancel(this.token));
        this.report(value);
        return new Promise<void>((resolve) => {
          this.finish = () => {
            listener.dispose();
            resolve();
          };
        });
      });
  }

  private report(value: ProgressValue): void {
    if (!this.reporter) {
      return;
    }
    if (typeof value.percentage === "number") {
      const pct = Math.max(0, Math.min(100, value.percentage));
      const increment = Math.max(0, pct - this.reported);
      this.reported += increment;
      this.reporter.report({ message: value.message, increment });
    } else if (value.message !== undefined) {
      this.reporter.report({ message: value.message });
    }
  }

  end(): void {
    this.ended = true;
    this.subscription.dispose();
    this.finish?.();
    this.finish = undefined;
    this.done?.(this);
  }
}
