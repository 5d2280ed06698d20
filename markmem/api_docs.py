"""``/docs`` for the REST API without a CDN: Swagger UI's files come from the ``swagger-ui-bundle``
package (part of the api extra) and are served at ``/docs/assets``, so the page works offline."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse
from starlette.staticfiles import StaticFiles

ASSETS = "/docs/assets"


def mount_docs(app: FastAPI) -> None:
    """Serve Swagger UI at /docs from local files; without the bundle, /docs says how to get it."""
    try:
        from swagger_ui_bundle import swagger_ui_path
    except ImportError:
        app.add_api_route("/docs", _missing, methods=["GET"], include_in_schema=False)
        return
    app.mount(ASSETS, StaticFiles(directory=swagger_ui_path), name="swagger-assets")

    def docs() -> HTMLResponse:
        return get_swagger_ui_html(openapi_url=app.openapi_url or "/openapi.json", title=f"{app.title} - docs",
                                   swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js",
                                   swagger_css_url=f"{ASSETS}/swagger-ui.css",
                                   swagger_favicon_url=f"{ASSETS}/favicon-32x32.png")

    app.add_api_route("/docs", docs, methods=["GET"], include_in_schema=False)


def _missing() -> JSONResponse:
    return JSONResponse({"error": "NotFound", "message": "Swagger UI needs the swagger-ui-bundle package: "
                         "pip install 'markmem[api]'"}, status_code=404)
