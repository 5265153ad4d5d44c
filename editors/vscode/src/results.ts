// "Show results": the run's HTML report in a webview panel, else its results file in an editor.
// The report holds model answers, which are untrusted text: the panel runs no script at all and loads
// nothing from outside the report's own folder.

export interface ShowResultsAnswer {
  ok: boolean;
  error?: string;
  file?: string; // the results file (Weval comparison JSON, AgentV JSONL)
  report?: string | null; // the HTML report of that run, when one could be made
}

/** The report's HTML with a Content-Security-Policy that forbids scripts and remote loads. */
export function panelHtml(html: string, cspSource: string): string {
  const csp =
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; ` +
    `style-src 'unsafe-inline' ${cspSource}; img-src ${cspSource} data:; font-src ${cspSource}; script-src 'none';">`;
  const head = /<head[^>]*>/i.exec(html);
  if (head) {
    const at = head.index + head[0].length;
    return html.slice(0, at) + csp + html.slice(at);
  }
  return `<!DOCTYPE html><html><head>${csp}</head><body>${html}</body></html>`;
}

export function panelTitle(report: string): string {
  const name = report.split(/[\\/]/).pop() ?? report;
  return `evalspec: ${name}`;
}
