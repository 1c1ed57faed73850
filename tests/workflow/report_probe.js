// Run in the rendered report after its scripts (tests/workflow/test_report.py): open every entry as its "view" button does
// (Snakemake's global `app`), and record where the content lies in the viewer: a figure's edges must lie inside
// the viewer or within its scroll range; an HTML or PDF entry must open a frame with its content.
window.addEventListener("load", () => setTimeout(async () => {
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const out = {height: window.innerHeight, width: window.innerWidth, entries: []};
  const nav = document.querySelector("#app nav");
  out.nav_width = nav ? nav.getBoundingClientRect().width : null;
  for (const path of Object.keys(results)) {
    const mime = getResultMimeType(path);
    const kind = mime.startsWith("image/") ? "img"
      : mime === "text/html" ? "html" : mime === "application/pdf" ? "pdf" : "download";
    const entry = {path, kind};
    if (kind !== "download") {
      app.setView({content: kind, contentPath: results[path].data_uri, resultPath: path});
      await sleep(300);
    }
    if (kind === "img") {
      const img = [...document.querySelectorAll("#app img")].find((i) => i.getAttribute("src") === results[path].data_uri);
      if (!img) {
        entry.shown = false;
        out.entries.push(entry);
        continue;
      }
      if (img && !img.complete) {
        await new Promise((resolve) => { img.onload = resolve; img.onerror = resolve; });
      }
      await sleep(50);
      const box = img.closest(".overflow-auto");
      const b = box.getBoundingClientRect();
      const i = img.getBoundingClientRect();
      entry.shown = img.naturalHeight > 0 && i.height > 0;
      entry.height = i.height;
      entry.viewer_width = b.width;
      entry.natural_height = img.naturalHeight;
      // Scrolling starts at 0: what lies above or left of the viewer is out of reach; below or right, reachable up
      // to the scroll range.
      entry.top_cut = b.top - i.top;
      entry.left_cut = b.left - i.left;
      entry.bottom_beyond = i.bottom - (b.bottom + box.scrollHeight - box.clientHeight);
      entry.right_beyond = i.right - (b.right + box.scrollWidth - box.clientWidth);
    } else if (kind !== "download") {
      const frame = document.querySelector("#app iframe");
      entry.shown = !!frame && frame.getAttribute("src") === results[path].data_uri
        && frame.getBoundingClientRect().height > 100;
    }
    out.entries.push(entry);
  }
  const pre = document.createElement("pre");
  pre.id = "ddppm-entries";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
}, 2000));
