// Starts Redoc on the page's #redoc element, for the document its data-openapi-url
// names. A file of its own so that the page's Content-Security-Policy needs no inline
// script (and no inline style: the body's margin is set here). The page links no web
// fonts: Redoc's fonts fall back to the system's.
"use strict";
(function () {
  var root = document.getElementById("redoc");
  document.body.style.margin = "0";
  Redoc.init(root.dataset.openapiUrl, {}, root);
})();
