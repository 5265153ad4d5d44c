// "Show results": the run's HTML report in a webview panel, else its results file in an editor.
// The report holds model answers, which are untrusted text. evalspec's report pins its own script by
// hash in a Content-Security-Policy (nothing else may run, nothing is fetched): such a page gets
// scripts; any other HTML gets a policy that runs no script at all.

export interface ShowResultsAnswer {
  ok: boolean;
  error?: string;
  file?: string; // the results file (Weval comparison JSON, AgentV JSONL)
  report?: string | null; // the HTML report of that run, when one could be made
}

const POLICY = /<meta\s+http-equiv="Content-Security-Policy"\s+content="([^"]*)"/i;

/** The panel's HTML and whether it may run scripts: only a page whose own policy allows no script but
 * the ones pinned by hash, and fetches nothing. */
export function panelContent(html: string, cspSource: string): { html: string; scripts: boolean } {
  const policy = POLICY.exec(html)?.[1] ?? "";
  const pinned = /script-src 'sha256-[^']+'(;|$)/.test(policy) && !/unsafe-inline|unsafe-eval/.test(
    /script-src[^;]*/.exec(policy)?.[0] ?? "") && /default-src 'none'/.test(policy);
  if (pinned) {
    return { html, scripts: true };
  }
  return { html: panelHtml(html, cspSource), scripts: false };
}

/** The HTML with a Content-Security-Policy that forbids scripts and remote loads. */
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
