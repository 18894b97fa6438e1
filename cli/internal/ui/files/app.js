// The Magos UI: actions through POST /act with this page's CSRF token, and
// live updates from /events (server-sent events) that refresh <main>
// without reloading the page.
"use strict";

const csrf = () => document.querySelector('meta[name="magos-csrf"]').content;

function say(message, ok) {
  const status = document.getElementById("status");
  status.textContent = message;
  status.className = ok ? "ok" : "refused";
}

async function act(button) {
  const d = button.dataset;
  if (d.confirm && !window.confirm(d.confirm)) {
    return;
  }
  button.disabled = true;
  try {
    const response = await fetch("/act", {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Magos-CSRF": csrf() },
      body: JSON.stringify({
        action: d.action, namespace: d.ns, name: d.name, plan: d.plan || "",
        stage: d.kind === "rollout" ? "rollout" : (d.stage || ""), revision: d.revision || "",
      }),
    });
    const result = await response.json();
    say(result.message || (result.ok ? "done" : "refused"), result.ok);
  } catch (e) {
    say("the UI could not be reached: " + e, false);
  } finally {
    button.disabled = false;
    refresh();
  }
}

async function refresh() {
  const response = await fetch(location.href, { headers: { Accept: "text/html" } });
  if (!response.ok) {
    return;
  }
  const doc = new DOMParser().parseFromString(await response.text(), "text/html");
  const fresh = doc.getElementById("main");
  const main = document.getElementById("main");
  if (fresh && main && fresh.innerHTML !== main.innerHTML) {
    const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.action : null;
    main.innerHTML = fresh.innerHTML;
    if (focused) {
      const again = main.querySelector('[data-action="' + focused + '"]');
      if (again) again.focus();
    }
  }
}

document.addEventListener("click", (e) => {
  const button = e.target.closest("button[data-action]");
  if (button) {
    act(button);
  }
});

const events = new EventSource("/events");
events.onmessage = () => refresh();
