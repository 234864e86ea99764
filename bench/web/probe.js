// Put in every bench page before its own scripts (playwright's
// addInitScript), so both apps are measured by the same code and neither
// carries it in its bundle.
//
// - Click → DOM change: a capturing click listener on `window` notes the
//   card's heart and count and watches the card with a MutationObserver;
//   the sample is the time from the click event's `timeStamp` (when the
//   browser made the event) to the observer's callback for the first
//   mutation after which both the heart and the count differ. `sameTask`
//   says whether that came before a message posted at the click, so within
//   the click's own task; `nextFrame`, whether it came before the next
//   animation frame's callbacks, so in the first frame drawn after the
//   click.
// - Calls: `fetch` is wrapped to count what the page asks to send, by
//   method and path, and how many are unanswered.

(() => {
  const clicks = [];
  /** Promises waiting for a click's change: [index, resolve]. */
  let waiting = [];
  const wake = () => {
    waiting = waiting.filter(([n, resolve]) => {
      if (clicks[n]?.ms == null) return true;
      resolve();
      return false;
    });
  };
  const calls = [];
  let inFlight = 0;

  const originalFetch = window.fetch;
  window.fetch = function fetch(input, init) {
    const method = init?.method ?? (input instanceof Request ? input.method : "GET");
    const url = new URL(input instanceof Request ? input.url : String(input), location.href);
    calls.push(`${method.toUpperCase()} ${url.pathname}`);
    inFlight += 1;
    const done = () => {
      inFlight -= 1;
    };
    const answer = originalFetch.call(this, input, init);
    answer.then(done, done);
    return answer;
  };

  const read = (card) => ({
    pressed: card.querySelector(".heart")?.getAttribute("aria-pressed") ?? null,
    count: card.querySelector(".count")?.textContent ?? null,
  });

  window.addEventListener(
    "click",
    (event) => {
      const heart = event.target instanceof Element ? event.target.closest(".heart") : null;
      const card = heart?.closest(".post");
      if (!card) return;
      const before = read(card);
      const sample = { trusted: event.isTrusted, before, after: null, ms: null, sameTask: null, nextFrame: null };
      clicks.push(sample);
      let framed = false;
      requestAnimationFrame(() => {
        framed = true;
      });
      let taskEnded = false;
      const channel = new MessageChannel();
      channel.port1.onmessage = () => {
        taskEnded = true;
        channel.port1.close();
      };
      channel.port2.postMessage(null);
      const observer = new MutationObserver(() => {
        const now = read(card);
        if (now.pressed === before.pressed || now.count === before.count) return;
        sample.ms = performance.now() - event.timeStamp;
        sample.sameTask = !taskEnded;
        sample.nextFrame = !framed;
        sample.after = now;
        observer.disconnect();
        wake();
      });
      observer.observe(card, { subtree: true, childList: true, attributes: true, characterData: true });
    },
    { capture: true },
  );

  window.probe = {
    clicks,
    /** Resolves once click `n` (counted from the page's first) changed its card; rejects after `timeoutMs`. */
    changed: (n, timeoutMs) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`click ${n} changed nothing within ${timeoutMs} ms`)), timeoutMs);
        waiting.push([
          n,
          () => {
            clearTimeout(timer);
            resolve();
          },
        ]);
        wake();
      }),
    calls,
    inFlight: () => inFlight,
  };
})();
