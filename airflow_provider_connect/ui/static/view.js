// The Kafka Connect page: reads api/overview every few seconds and renders it; buttons POST actions.
// Plain DOM, no framework: every value goes in through textContent, never as HTML.
"use strict";

const REFRESH_MS = 5000;
const base = location.pathname.replace(/\/?$/, "/");
const clusters = document.getElementById("clusters");
const stateFilter = document.getElementById("state-filter");
const nameFilter = document.getElementById("name-filter");
let last = null;
let timer = null;

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null) continue;
    if (key === "text") node.textContent = value;
    else if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children.flat()) if (child) node.append(child);
  return node;
}

function badge(state) {
  return el("span", { class: `state ${state || ""}`, "data-state": state, text: state || "no status" });
}

function say(text, isError) {
  const box = document.getElementById("message");
  box.hidden = !text;
  box.textContent = text || "";
  box.className = isError ? "error" : "";
}

function matches(connector) {
  const state = stateFilter.value;
  const name = nameFilter.value.trim().toLowerCase();
  if (name && !connector.name.toLowerCase().includes(name)) return false;
  if (!state) return true;
  return connector.state === state || connector.tasks.some((task) => task.state === state);
}

function headline(text) {
  // The line that names the error: a Python traceback's last line, a Java stack trace's first.
  const lines = text.split("\n").map((line) => line.trim()).filter(Boolean);
  const line = text.startsWith("Traceback") ? lines[lines.length - 1] : lines[0];
  return line.length > 160 ? line.slice(0, 157) + "…" : line;
}

function trace(text, label) {
  if (!text) return null;
  return el("details", { class: "trace" },
    el("summary", { text: `${label}: ${headline(text)}` }), el("pre", { text }));
}

function offsetsList(connector) {
  if (connector.offsets_error) return el("span", { class: "error", text: connector.offsets_error });
  if (!connector.offsets || !connector.offsets.length) return el("span", { class: "muted", text: "none" });
  const pairs = (map) => map === null ? "null" : Object.entries(map).map(([key, value]) => `${key}=${JSON.stringify(value)}`).join(", ");
  return el("ul", { class: "plain" }, connector.offsets.map((entry) =>
    el("li", { text: `${pairs(entry.partition)} → ${pairs(entry.offset)}` })));
}

function topicsList(connector) {
  if (connector.topics_error) return el("span", { class: "muted", text: connector.topics_error });
  if (!connector.topics || !connector.topics.length) return el("span", { class: "muted", text: "none yet" });
  return el("ul", { class: "plain" }, connector.topics.map((topic) => el("li", { text: topic })));
}

function actions(cluster, connector) {
  if (!cluster.can_act) return el("span", { class: "muted", text: "read only" });
  const button = (action, label, cls) => el("button", {
    type: "button", class: cls, "data-action": action, text: label,
    onclick: (event) => act(cluster.conn_id, connector.name, action, event.target),
  });
  return el("div", { class: "actions" },
    connector.failed ? button("restart-failed", "Restart failed", "danger") : null,
    connector.state === "RUNNING" ? button("pause", "Pause") : null,
    connector.state === "PAUSED" || connector.state === "STOPPED" ? button("resume", "Resume") : null,
    connector.state !== "STOPPED" ? button("stop", "Stop") : null);
}

function row(cluster, connector) {
  const tasks = connector.tasks.length
    ? connector.tasks.map((task) => el("div", { class: "task", "data-task": task.id, "data-state": task.state },
        `${task.id} `, badge(task.state), el("span", { class: "worker", text: ` on ${task.worker_id || "?"}` }),
        trace(task.trace, `task ${task.id}`)))
    : [el("span", { class: "muted", text: "no tasks" })];
  return el("tr", { class: connector.failed ? "failed" : "", "data-connector": connector.name, "data-state": connector.state },
    el("td", {}, el("div", { class: "name", text: connector.name }), el("div", { class: "class", text: connector.class || "" })),
    el("td", { text: connector.type || "" }),
    el("td", {}, badge(connector.state), el("div", { class: "worker", text: connector.worker_id || "" }),
      trace(connector.trace, "connector")),
    el("td", {}, tasks),
    el("td", {}, topicsList(connector)),
    el("td", {}, offsetsList(connector)),
    el("td", {}, actions(cluster, connector)));
}

function counts(connectors) {
  const byState = {};
  for (const c of connectors) byState[c.state] = (byState[c.state] || 0) + 1;
  const failing = connectors.filter((c) => c.failed && c.state !== "FAILED").length;
  return el("span", { class: "counts" }, Object.keys(byState).sort().map((state) =>
    el("span", { class: `state ${state}`, text: `${byState[state]} ${state}` })),
    failing ? el("span", { class: "state FAILED", text: `${failing} with failed tasks` }) : null);
}

function render() {
  if (!last) return;
  const sections = last.connections.map((cluster) => {
    const shown = cluster.connectors.filter(matches);
    const title = el("h2", {}, cluster.conn_id, el("span", { class: "url", text: cluster.url || "" }),
      counts(cluster.connectors));
    if (cluster.error) return el("section", { "data-conn-id": cluster.conn_id }, title, el("p", { class: "error", text: cluster.error }));
    const body = shown.length
      ? el("table", {}, el("thead", {}, el("tr", {}, ["Connector", "Type", "State", "Tasks and workers", "Topics", "Offsets", "Actions"].map((h) => el("th", { text: h })))),
          el("tbody", {}, shown.map((connector) => row(cluster, connector))))
      : el("p", { class: "muted", text: cluster.connectors.length ? "No connector matches the filter." : "No connectors." });
    return el("section", { "data-conn-id": cluster.conn_id }, title, body);
  });
  const open = new Set([...clusters.querySelectorAll("details[open] summary")].map((s) => s.closest("tr").dataset.connector + s.textContent));
  clusters.replaceChildren(...(sections.length ? sections : [el("p", { class: "muted", text: "No Kafka Connect connection you may read." })]));
  for (const summary of clusters.querySelectorAll("details summary")) {
    if (open.has(summary.closest("tr").dataset.connector + summary.textContent)) summary.parentElement.open = true;
  }
}

async function load() {
  clearTimeout(timer);
  try {
    const response = await fetch(base + "api/overview", { headers: { Accept: "application/json" } });
    if (response.status === 401) throw new Error("Log in to Airflow to see Kafka Connect.");
    if (!response.ok) throw new Error(`The page's API answered ${response.status}`);
    last = await response.json();
    render();
    document.getElementById("refreshed").textContent = `updated ${new Date().toLocaleTimeString()}`;
  } catch (error) {
    say(error.message, true);
  } finally {
    timer = setTimeout(load, REFRESH_MS);
  }
}

async function act(connId, name, action, button) {
  button.disabled = true;
  try {
    const url = `${base}api/connections/${encodeURIComponent(connId)}/connectors/${encodeURIComponent(name)}/${action}`;
    const response = await fetch(url, { method: "POST", headers: { "X-Kafka-Connect-View": "1", Accept: "application/json" } });
    const body = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(body.detail || `${action} failed with ${response.status}`);
    say(body.message, false);
  } catch (error) {
    say(error.message, true);
    button.disabled = false;
  }
  load();
}

stateFilter.addEventListener("change", render);
nameFilter.addEventListener("input", render);
load();
