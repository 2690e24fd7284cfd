extension InspectorAssets {
    /// The page's script: the live list, its filters, the details pane, and the header's
    /// reachability and shape-drift lines, fed by `/-/events`.
    static let javascript = #"""
        "use strict";
        // serializerd's live inspector. Every value goes into the page with textContent.
        const LIMIT = 2000;
        const $ = (id) => document.getElementById(id);
        const flows = [];          // newest last, at most LIMIT
        let paused = false, pending = [], selected = null;
        const routes = new Set();

        function el(tag, text, cls) {
          const e = document.createElement(tag);
          if (text !== undefined && text !== null) e.textContent = String(text);
          if (cls) e.className = cls;
          return e;
        }
        function statusClass(s) { return s >= 500 ? "5xx" : s >= 400 ? "4xx" : s >= 300 ? "3xx" : "2xx"; }
        function outcomeClass(f) { return f.outcome === "ok" ? "o-ok" : f.status >= 500 ? "o-5xx" : "o-4xx"; }
        function time(ts) { const t = String(ts || ""); const i = t.indexOf("T"); return i < 0 ? t : t.slice(i + 1, i + 13); }
        function bytes(n) { return n >= 1048576 ? (n / 1048576).toFixed(1) + " MB" : n >= 1024 ? (n / 1024).toFixed(1) + " KB" : (n || 0) + " B"; }
        function ms(v) { return v === undefined || v === null ? "—" : Number(v).toFixed(v < 10 ? 2 : 1) + " ms"; }

        function matches(f) {
          const route = $("f-route").value, outcome = $("f-outcome").value, status = $("f-status").value, source = $("f-source").value;
          const text = $("f-text").value.trim().toLowerCase();
          if (route && f.route !== route) return false;
          if (outcome === "ok" && f.outcome !== "ok") return false;
          if (outcome === "failed" && f.outcome === "ok") return false;
          if (status && statusClass(f.status) !== status) return false;
          if (source && f.source !== source) return false;
          if (text) {
            const hay = [f.method, f.route, f.path, f.status, f.outcome, f.source, f.cache, f.faults, f.request_id, f.upstream_url, f.error, f.serializer].join(" ").toLowerCase();
            if (!hay.includes(text)) return false;
          }
          return true;
        }

        // The outcome, and badges: the answer broke its route's contract (reported or
        // enforced), the request was retried, it waited in its route's queue.
        function outcome(f) {
          const td = el("td", f.outcome, outcomeClass(f));
          if (f.contract_violations) {
            const n = f.contract_violations;
            td.append(el("span", "contract ✗" + n, "badge"));
            td.lastChild.title = n + (n === 1 ? " contract violation" : " contract violations") + ": open the flow for each";
          }
          if (f.attempts) {
            td.append(el("span", "retried ×" + f.attempts, "badge"));
            td.lastChild.title = f.attempts + " attempts at the upstream (retry); the answer is the last one's";
          }
          if (f.queue_ms) {
            td.append(el("span", "queued " + ms(f.queue_ms), "badge"));
            td.lastChild.title = "waited in the route's queue (limits, or a pause the upstream asked for)";
          }
          return td;
        }

        function row(f) {
          const tr = el("tr");
          tr.dataset.id = f.request_id;
          tr.flow = f;
          tr.append(el("td", time(f.ts)), el("td", f.method), el("td", f.route), el("td", f.path, "path"),
                    el("td", f.status, outcomeClass(f)), outcome(f), el("td", [f.source || "—", f.cache, f.faults].filter(Boolean).join(" · "), "source"));
          const d = el("td"), bar = el("span", null, "dur"), total = Math.max(f.duration_ms || 0, 0.001);
          const up = el("span", null, "up"), ser = el("span", null, "ser");
          up.style.width = Math.min(100, 100 * (f.upstream_ms || 0) / total) + "%";
          ser.style.width = Math.min(100, 100 * (f.serialize_ms || 0) / total) + "%";
          bar.title = "upstream " + ms(f.upstream_ms) + ", serialize " + ms(f.serialize_ms);
          bar.append(up, ser);
          d.append(bar, el("span", ms(f.duration_ms)));
          tr.append(d, el("td", bytes(f.bytes_in) + " → " + bytes(f.bytes_out)));
          tr.addEventListener("click", () => select(f.request_id));
          if (f.request_id === selected) tr.classList.add("selected");
          return tr;
        }

        function render() {
          const body = $("rows"), shown = flows.filter(matches);
          const frag = document.createDocumentFragment();
          for (let i = shown.length - 1; i >= 0; i--) frag.append(row(shown[i]));
          body.replaceChildren(frag);
          $("empty").hidden = flows.length > 0;
          count();
        }

        function count() {
          const shown = $("rows").children.length;
          $("count").textContent = shown + " of " + flows.length + " flows" + (pending.length ? " · " + pending.length + " waiting (paused)" : "");
        }

        function addRoute(name) {
          if (!name || routes.has(name)) return;
          routes.add(name);
          $("f-route").append(el("option", name));
        }

        function add(list) {
          for (const f of list) { flows.push(f); addRoute(f.route); }
          if (flows.length > LIMIT) flows.splice(0, flows.length - LIMIT);
        }

        // Live events are drawn once per frame, and only the new rows: at thousands of
        // completions a second the page adds rows instead of redrawing the list.
        let fresh = [], frameQueued = false;
        // Requests in flight (progress events of transfers over a second), each until its
        // completion arrives.
        const flying = new Map();
        function showFlight(p) {
          let row = flying.get(p.request_id);
          if (!row) {
            row = el("li", "", "");
            row.dataset.id = p.request_id;
            flying.set(p.request_id, row);
            $("inflight").append(row);
          }
          const bar = document.createElement("progress");
          if (p.total_down) { bar.max = p.total_down; bar.value = p.bytes_down; }
          const total = p.total_down ? " / " + p.total_down : "";
          row.replaceChildren(el("span", p.method + " " + p.path, ""), bar,
                              el("span", p.bytes_down + total + " bytes, " + (p.elapsed_ms / 1000).toFixed(1) + " s", ""));
        }
        function landed(id) {
          const row = flying.get(id);
          if (row) { row.remove(); flying.delete(id); }
        }
        function receive(f) {
          landed(f.request_id);
          if (paused) {
            pending.push(f);
            if (pending.length > LIMIT) pending.shift();
          } else {
            fresh.push(f);
          }
          if (!frameQueued) { frameQueued = true; requestAnimationFrame(drawFresh); }
        }

        function drawFresh() {
          frameQueued = false;
          const batch = fresh.length > LIMIT ? fresh.slice(fresh.length - LIMIT) : fresh;
          fresh = [];
          add(batch);
          const body = $("rows");
          const frag = document.createDocumentFragment();
          for (let i = batch.length - 1; i >= 0; i--) if (matches(batch[i])) frag.append(row(batch[i]));
          body.prepend(frag);
          // Rows of flows that left the bounded list go from the bottom.
          const kept = new Set(flows);
          while (body.lastChild && !kept.has(body.lastChild.flow)) body.lastChild.remove();
          $("empty").hidden = flows.length > 0;
          count();
        }

        function fact(dl, name, value) { dl.append(el("dt", name), el("dd", value === undefined || value === null || value === "" ? "—" : value)); }

        async function select(id) {
          selected = id;
          for (const tr of $("rows").children) tr.classList.toggle("selected", tr.dataset.id === id);
          const f = flows.find((x) => x.request_id === id);
          if (!f) return;
          $("details").hidden = false;
          $("d-title").textContent = f.method + " " + f.path;
          const dl = $("d-facts");
          dl.replaceChildren();
          fact(dl, "request id", f.request_id); fact(dl, "route", f.route); fact(dl, "status", f.status);
          fact(dl, "outcome", f.outcome); fact(dl, "source", f.source); fact(dl, "cache", f.cache); fact(dl, "faults", f.faults); fact(dl, "upstream", f.upstream_url); fact(dl, "upstream status", f.upstream_status);
          fact(dl, "content type", f.content_type); fact(dl, "serializer", f.serializer);
          fact(dl, "duration", ms(f.duration_ms)); fact(dl, "upstream time", ms(f.upstream_ms)); fact(dl, "serialize time", ms(f.serialize_ms));
          fact(dl, "bytes", bytes(f.bytes_in) + " → " + bytes(f.bytes_out)); fact(dl, "error", f.error);
          fact(dl, "contract violations", f.contract_violations);
          fact(dl, "attempts", f.attempts); fact(dl, "queue time", f.queue_ms === undefined ? undefined : ms(f.queue_ms));
          $("d-failure").hidden = true;
          $("d-stream").hidden = true;
          if (f.stream) showStream(id, f.stream);
          // A reported contract violation kept its evidence like a failure.
          if (f.outcome === "ok" && !f.contract_violations) return;
          const response = await fetch("/-/failures/" + encodeURIComponent(id));
          if (selected !== id) return;
          if (!response.ok) {
            $("d-failure").hidden = false;
            $("d-problem").textContent = f.error || f.outcome;
            $("d-upstream").replaceChildren();
            $("d-reproduce").hidden = true;
            $("d-command").textContent = "";
            $("d-body").removeAttribute("href");
            $("d-note").textContent = "No upstream response is kept for this flow (it did not reach a serializer, or admin.keep_failures is false).";
            return;
          }
          const e = await response.json();
          $("d-failure").hidden = false;
          $("d-reproduce").hidden = false;
          $("d-problem").textContent = JSON.stringify(e.problem, null, 2);
          const up = $("d-upstream");
          up.replaceChildren();
          fact(up, "status", e.upstream.status); fact(up, "content type", e.upstream.content_type);
          fact(up, "body", e.upstream.body_bytes + " bytes" + (e.upstream.body_truncated ? " (first 256 KiB kept)" : ""));
          for (const [name, value] of e.upstream.headers) fact(up, name, value);
          $("d-command").textContent = e.reproduce.command;
          $("d-body").href = e.reproduce.body_path;
          $("d-body").setAttribute("download", e.reproduce.body_file);
          $("d-note").textContent = "";
        }

        // A stream's or WebSocket's last events (kept while this page watches /-/events).
        async function showStream(id, summary) {
          const ws = summary.kind === "websocket";
          $("d-stream").hidden = false;
          $("d-stream-title").textContent = ws ? "Messages (" + summary.messages_to_client + " to the client, " + summary.messages_to_upstream + " to the upstream)"
                                                 : "Events (" + summary.events + ", " + summary.invalid + " invalid, " + summary.dropped + " dropped)";
          $("d-events").replaceChildren();
          $("d-stream-note").textContent = "";
          const response = await fetch("/-/streams/" + encodeURIComponent(id));
          if (selected !== id) return;
          if (!response.ok) {
            $("d-stream-note").textContent = "No events are kept for this " + (ws ? "WebSocket" : "stream") + " (they are kept only while the inspector is open).";
            return;
          }
          const s = await response.json();
          $("d-stream-note").textContent = "The last " + s.events.length + " (at most 100, 4 KiB each, redacted).";
          const list = $("d-events");
          for (const e of s.events) {
            const li = el("li");
            const meta = [time(e.time), e.direction === "send" ? "→ upstream" : e.direction === "receive" ? "← upstream" : null, e.event].filter(Boolean).join(" · ");
            li.append(el("span", meta, "meta"), el("span", bytes(e.bytes) + (e.truncated ? " (cut)" : ""), "meta"), el("pre", e.data));
            list.append(li);
          }
        }

        function move(step) {
          const rows = Array.from($("rows").children);
          if (!rows.length) return;
          let i = rows.findIndex((tr) => tr.dataset.id === selected);
          i = i < 0 ? 0 : Math.max(0, Math.min(rows.length - 1, i + step));
          select(rows[i].dataset.id);
          rows[i].scrollIntoView({ block: "nearest" });
        }

        function setPaused(value) {
          paused = value;
          $("pause").textContent = paused ? "resume" : "pause";
          if (!paused && pending.length) { add(pending); pending = []; }
          render();
          if (paused) count();
        }

        function connect() {
          const source = new EventSource("/-/events");
          source.addEventListener("open", () => { $("state").textContent = "live"; $("state").className = "state live"; });
          source.addEventListener("error", () => { $("state").textContent = "reconnecting…"; $("state").className = "state"; });
          source.addEventListener("request_completed", (m) => { try { receive(JSON.parse(m.data)); } catch (_) {} });
          source.addEventListener("progress", (m) => { try { showFlight(JSON.parse(m.data)); } catch (_) {} });
          // Each route's latest reachability change, as text (never markup from the event).
          const reach = new Map();
          source.addEventListener("reachability_changed", (m) => {
            try {
              const c = JSON.parse(m.data);
              reach.set(c.route, c);
              const box = $("reach");
              box.replaceChildren(...[...reach.values()].map((r) => el("span", r.route + ": " + r.to + " since " + r.at.slice(11, 19), r.to === "unreachable" ? "down" : "up")));
            } catch (_) {}
          });
          // Shape changes by route: how many, and the latest.
          const drift = new Map();
          source.addEventListener("shape_drift", (m) => {
            try {
              const c = JSON.parse(m.data);
              const seen = drift.get(c.route) || { count: 0 };
              drift.set(c.route, { count: seen.count + 1, last: c });
              $("drift").replaceChildren(...[...drift.entries()].map(([route, d]) => el("span",
                route + ": " + d.count + (d.count === 1 ? " shape change" : " shape changes") + " · " + d.last.endpoint + " " + d.last.kind + " " + (d.last.pointer || "/"))));
            } catch (_) {}
          });
        }

        async function start() {
          for (const id of ["f-route", "f-outcome", "f-status", "f-source"]) $(id).addEventListener("change", render);
          $("f-text").addEventListener("input", render);
          $("pause").addEventListener("click", () => setPaused(!paused));
          $("clear").addEventListener("click", () => { flows.length = 0; pending = []; fresh = []; render(); });
          $("d-close").addEventListener("click", () => { $("details").hidden = true; });
          $("d-copy").addEventListener("click", () => navigator.clipboard && navigator.clipboard.writeText($("d-command").textContent));
          document.addEventListener("keydown", (k) => {
            if (k.target.tagName === "INPUT" || k.target.tagName === "SELECT") {
              if (k.key === "Escape") k.target.blur();
              return;
            }
            if (k.key === "j" || k.key === "ArrowDown") { move(1); k.preventDefault(); }
            else if (k.key === "k" || k.key === "ArrowUp") { move(-1); k.preventDefault(); }
            else if (k.key === "Enter" && selected) select(selected);
            else if (k.key === "/") { $("f-text").focus(); k.preventDefault(); }
            else if (k.key === "p") setPaused(!paused);
            else if (k.key === "Escape") $("details").hidden = true;
          });
          try {
            const recent = await (await fetch("/-/recent")).json();
            add(recent.events || []);
            const inflight = await (await fetch("/-/inflight")).json();
            for (const p of inflight.requests || []) showFlight(p);
          } catch (_) {}
          render();
          connect();
        }
        start();
        """#
}
