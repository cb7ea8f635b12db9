// Starts Swagger UI on the page's #swagger-ui element, for the document its
// data-openapi-url names. A file of its own so that the page's Content-Security-Policy
// needs no inline script. validatorUrl: null keeps the badge that asks an outside
// validator about the document off.
"use strict";
(function () {
  var root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: root.dataset.openapiUrl,
    domNode: root,
    validatorUrl: null,
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
  });
})();
