// Downloads that work when the book is opened from disk (file://): browsers ignore the `download` attribute
// of a link to another local file and show a notebook as raw JSON. The build embeds each notebook (and an
// exercise's inputs.py) the page offers (base64, in #bert-file-downloads); a click on a file:// page saves that copy instead. Served over
// http(s) the link is left alone.
(function () {
  "use strict";
  if (location.protocol !== "file:") return;
  var holder = document.getElementById("bert-file-downloads");
  if (!holder) return;
  var files = JSON.parse(holder.textContent);
  document.addEventListener("click", function (event) {
    var link = event.target.closest ? event.target.closest("a.reference.download") : null;
    if (!link) return;
    var data = files[link.getAttribute("href")];
    if (data === undefined) return;
    event.preventDefault();
    var bytes = Uint8Array.from(atob(data), function (c) { return c.charCodeAt(0); });
    var url = URL.createObjectURL(new Blob([bytes], { type: "application/octet-stream" }));
    var save = document.createElement("a");
    save.href = url;
    save.download = link.getAttribute("href").split("/").pop();
    document.body.appendChild(save);
    save.click();
    save.remove();
    setTimeout(function () { URL.revokeObjectURL(url); }, 1000);
  });
})();
