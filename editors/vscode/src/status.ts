// The status-bar item: a run going on (click to cancel it), else the last run's mean (click for the
// results). Kept apart from VS Code's API so it can be tested with a plain object.

export interface RunState {
  uri: string;
  running: boolean;
  done?: number;
  total?: number;
  errors?: number;
  mean?: number | null;
}

export interface Item {
  text: string;
  tooltip?: unknown;
  command?: unknown;
  show(): void;
  hide(): void;
}

export const CANCEL_COMMAND = "evalspec.cancelActiveRun";
export const RESULTS_COMMAND = "evalspec.showResultsActiveFile";

export function describe(state: RunState | undefined): { text: string; tooltip: string; command: string } | undefined {
  if (state === undefined) {
    return undefined;
  }
  if (state.running) {
    const progress = state.total ? ` ${state.done ?? 0}/${state.total}` : "";
    const errors = state.errors ? `, ${state.errors} error(s)` : "";
    return {
      text: `$(sync~spin) evalspec${progress}${errors}`,
      tooltip: "evalspec: a run is going on. Click to cancel it (the results received are kept).",
      command: CANCEL_COMMAND,
    };
  }
  if (state.mean === undefined) {
    return undefined;
  }
  const mean = state.mean === null ? "nothing scored" : `mean ${state.mean.toFixed(2)}`;
  return {
    text: `$(beaker) evalspec ${mean}`,
    tooltip: "evalspec: the last run of this file. Click to open its results.",
    command: RESULTS_COMMAND,
  };
}

/** One item for the whole window, showing the state of the active file's runs. */
export class RunStatus {
  private readonly states = new Map<string, RunState>();
  private active: string | undefined;

  constructor(private readonly item: Item) {}

  update(state: RunState): void {
    const previous = this.states.get(state.uri);
    // A state without a mean keeps the last one known.
    const mean = state.mean !== undefined ? state.mean : previous?.mean;
    this.states.set(state.uri, { ...state, mean });
    this.render();
  }

  setActive(uri: string | undefined): void {
    this.active = uri;
    this.render();
  }

  stateOf(uri: string): RunState | undefined {
    return this.states.get(uri);
  }

  private render(): void {
    const shown = describe(this.active === undefined ? undefined : this.states.get(this.active));
    if (shown === undefined) {
      this.item.hide();
      return;
    }
    this.item.text = shown.text;
    this.item.tooltip = shown.tooltip;
    this.item.command = shown.command;
    this.item.show();
  }
}
