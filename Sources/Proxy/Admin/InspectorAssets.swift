/// The live inspector's page (`/-/ui`), compiled into the binary: no CDN, no build step,
/// nothing fetched but serializerd's own admin endpoints. The script writes every value
/// with `textContent` (bodies and headers are hostile input), and the page's
/// Content-Security-Policy allows only its own script and style.
enum InspectorAssets {
    static let contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        + "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    static let html = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>serializerd inspector</title>
        <link rel="icon" href="data:,">
        <link rel="stylesheet" href="/-/ui/app.css">
        <script src="/-/ui/app.js" defer></script>
        </head>
        <body>
        <header>
          <h1>serializerd</h1>
          <span id="state" class="state">connecting…</span>
          <span id="reach" class="reach" title="upstreams whose reachability changed while this page was open"></span>
          <span id="drift" class="drift" title="shape changes reported while this page was open (GET /-/drift lists them all)"></span>
          <label>route <select id="f-route"><option value="">all</option></select></label>
          <label>outcome <select id="f-outcome"><option value="">all</option><option value="ok">ok</option><option value="failed">failed</option></select></label>
          <label>status <select id="f-status"><option value="">all</option><option>2xx</option><option>3xx</option><option>4xx</option><option>5xx</option></select></label>
          <label>source <select id="f-source"><option value="">all</option><option value="upstream">upstream</option><option value="tape">tape</option><option value="mock">mock</option><option value="cache">cache</option></select></label>
          <input id="f-text" type="search" placeholder="filter (press /)" aria-label="free-text filter">
          <button id="pause" type="button" title="pause or resume the live list (p)">pause</button>
          <button id="clear" type="button" title="clear the list">clear</button>
          <a id="har" href="/-/recent?format=har" download="serializerd.har">HAR</a>
        </header>
        <main>
          <div class="list">
          <ul id="inflight" class="inflight" aria-label="requests in flight"></ul>
          <table id="flows" aria-label="flows">
            <thead><tr><th>time</th><th>method</th><th>route</th><th>path</th><th>status</th><th>outcome</th><th>source</th><th>duration <span class="key"><i class="up"></i>upstream <i class="ser"></i>serialize</span></th><th>bytes in → out</th></tr></thead>
            <tbody id="rows"></tbody>
          </table>
          <p id="empty" class="empty">No flows yet: requests through serializerd appear here as they complete.</p>
          </div>
          <aside id="details" hidden>
            <div class="bar"><h2 id="d-title"></h2><button id="d-close" type="button" title="close (Esc)">×</button></div>
            <dl id="d-facts"></dl>
            <section id="d-stream" hidden>
              <h3 id="d-stream-title">Events</h3>
              <p id="d-stream-note" class="note"></p>
              <ol id="d-events" class="events"></ol>
            </section>
            <section id="d-failure" hidden>
              <div id="d-reproduce">
              <h3>Reproduce offline</h3>
              <p><a id="d-body" download>save body</a> then run, beside it:</p>
              <pre id="d-command"></pre>
              <button id="d-copy" type="button">copy the reproduce command</button>
              </div>
              <p id="d-note" class="note"></p>
              <h3>Problem document</h3>
              <pre id="d-problem"></pre>
              <h3>Upstream response</h3>
              <dl id="d-upstream"></dl>
            </section>
          </aside>
        </main>
        <footer><span id="count">0 flows</span> · <kbd>j</kbd>/<kbd>k</kbd> move · <kbd>Enter</kbd> details · <kbd>/</kbd> filter · <kbd>p</kbd> pause · <kbd>Esc</kbd> close</footer>
        </body>
        </html>
        """

    static let css = """
        :root { --bg: #fff; --fg: #1d1f21; --muted: #6b7280; --line: #e5e7eb; --row: #f9fafb; --sel: #dbeafe;
          --ok: #15803d; --client: #b45309; --server: #b91c1c; --up: #2563eb; --ser: #9333ea; color-scheme: light dark; }
        @media (prefers-color-scheme: dark) {
          :root { --bg: #111318; --fg: #e5e7eb; --muted: #9ca3af; --line: #2a2e37; --row: #161a21; --sel: #1e3a5f;
            --ok: #4ade80; --client: #fbbf24; --server: #f87171; --up: #60a5fa; --ser: #c084fc; }
        }
        * { box-sizing: border-box; }
        body { margin: 0; font: 13px/1.4 system-ui, sans-serif; background: var(--bg); color: var(--fg); }
        header { display: flex; flex-wrap: wrap; gap: 10px; align-items: center; padding: 8px 12px; border-bottom: 1px solid var(--line);
          position: sticky; top: 0; background: var(--bg); z-index: 1; }
        h1 { font-size: 15px; margin: 0 8px 0 0; }
        .state { color: var(--muted); min-width: 7em; }
        .state.live { color: var(--ok); }
        .inflight { list-style: none; margin: 0; padding: 0; }
        .inflight li { display: flex; gap: .8em; align-items: center; color: var(--muted); }
        .inflight progress { width: 12em; }
        .reach .down { color: var(--bad, #c0392b); margin-right: .6em; }
        .reach .up { color: var(--ok); margin-right: .6em; }
        .drift span, .badge { color: var(--bad, #c0392b); }
        .drift span { margin-right: .6em; }
        .badge { border: 1px solid currentColor; border-radius: 3px; padding: 0 4px; margin-left: .5em; font-size: 85%; }
        select, input, button { font: inherit; color: inherit; background: var(--row); border: 1px solid var(--line); border-radius: 4px; padding: 2px 6px; }
        input[type=search] { min-width: 16em; }
        button { cursor: pointer; }
        a { color: var(--up); }
        main { display: flex; align-items: flex-start; }
        /* The list gives way to the details pane: the path column shrinks (ellipsis), the
           page never scrolls sideways. */
        .list { flex: 1 1 auto; min-width: 0; }
        table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
        th, td { text-align: left; padding: 3px 8px; border-bottom: 1px solid var(--line); white-space: nowrap; }
        th { color: var(--muted); font-weight: 500; position: sticky; top: 41px; background: var(--bg); }
        td.path { max-width: 1px; width: 100%; overflow: hidden; text-overflow: ellipsis; font-family: ui-monospace, monospace; }
        tbody tr { cursor: pointer; }
        tbody tr:nth-child(even) { background: var(--row); }
        tbody tr.selected { background: var(--sel); }
        .o-ok { color: var(--ok); } .o-4xx { color: var(--client); } .o-5xx { color: var(--server); }
        .dur { display: inline-flex; width: 90px; height: 8px; margin-right: 6px; vertical-align: middle; background: var(--line); border-radius: 2px; overflow: hidden; }
        .dur .up { background: var(--up); } .dur .ser { background: var(--ser); }
        .key { font-weight: 400; font-size: 11px; margin-left: 6px; }
        .key i { display: inline-block; width: 8px; height: 8px; margin: 0 3px 0 6px; border-radius: 2px; }
        .key .up { background: var(--up); } .key .ser { background: var(--ser); }
        .empty { color: var(--muted); padding: 24px; }
        aside { flex: 0 0 44%; min-width: 320px; border-left: 1px solid var(--line); padding: 8px 12px; position: sticky; top: 41px;
          max-height: calc(100vh - 80px); overflow: auto; }
        aside .bar { display: flex; justify-content: space-between; align-items: center; }
        h2 { font-size: 14px; margin: 4px 0; overflow-wrap: anywhere; } h3 { font-size: 13px; margin: 12px 0 4px; color: var(--muted); }
        dl { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 2px 12px; margin: 0; }
        dt { color: var(--muted); max-width: 16em; overflow-wrap: anywhere; } dd { margin: 0; overflow-wrap: anywhere; font-family: ui-monospace, monospace; }
        ol.events { list-style: none; padding: 0; margin: 0; }
        ol.events li { border-bottom: 1px solid var(--line); padding: 4px 0; }
        ol.events .meta { color: var(--muted); margin-right: 6px; }
        ol.events pre { margin-top: 2px; }
        pre { background: var(--row); border: 1px solid var(--line); padding: 8px; overflow: auto; white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; }
        .note { color: var(--muted); }
        footer { color: var(--muted); padding: 6px 12px; border-top: 1px solid var(--line); position: sticky; bottom: 0; background: var(--bg); }
        kbd { border: 1px solid var(--line); border-radius: 3px; padding: 0 4px; }
        """
}
