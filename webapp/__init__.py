"""Flask web app: upload a photo, see and correct the reading, permalinks. See ``create_app``.

``create_app(test_config)`` builds the app (blueprints: ``pages``, ``api``, ``batch``);
``serve(host, port, db)`` runs it under waitress for ``kingdomino serve``. Configuration keys:

- ``DATABASE``: SQLite file (default: ``kingdomino.sqlite3`` in the instance folder).
- ``READER``: ``callable(photo_bytes, rules, bonuses) -> dict`` (the contract's scored JSON of
  a photo, with ``corners``/``homography`` when known); tests swap in a fake one.
- ``MAX_CONTENT_LENGTH`` (bytes, default 25 MB), ``MAX_PIXELS`` (default 60 megapixels):
  larger uploads are refused before any decoding.
- ``SECRET_KEY``: when not given, a random key is made once and kept in the instance folder.
"""
from __future__ import annotations

import os
import secrets
from pathlib import Path

from flask import Flask, g, jsonify, render_template, request
from werkzeug.exceptions import HTTPException

from kingdomino.store import DEFAULT_DB, Store

from . import security
from .reading import default_reader

MAX_UPLOAD_BYTES = 25 * 1024 * 1024
MAX_PIXELS = 60_000_000


def _secret_key(instance: Path) -> str:
    """The app's signing key, created once (readable by its owner only) and kept."""
    path = instance / "secret_key"
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        pass
    instance.mkdir(parents=True, exist_ok=True)
    key = secrets.token_hex(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(key)
    return key


def get_store() -> Store:
    """The request's store connection (SQLite connections are per thread)."""
    if "store" not in g:
        from flask import current_app

        g.store = Store(current_app.config["DATABASE"])
    return g.store


def _close_store(_exc=None) -> None:
    store = g.pop("store", None)
    if store is not None:
        store.close()


def _rules_title(name: str) -> str:
    """A rule set's friendly title (as the forms show it), for the pages that name one."""
    from . import api

    return api.rules_meta(name)["title"]


def create_app(test_config: dict | None = None) -> Flask:
    """Build the web app. ``test_config`` overrides any setting (see the module doc)."""
    test_config = dict(test_config or {})
    kwargs = {}
    if test_config.get("INSTANCE_PATH"):
        kwargs["instance_path"] = str(Path(test_config["INSTANCE_PATH"]).resolve())
    app = Flask(__name__, instance_relative_config=True, **kwargs)
    app.config.update(
        DATABASE=None,
        READER=default_reader,
        MAX_CONTENT_LENGTH=MAX_UPLOAD_BYTES,
        MAX_PIXELS=MAX_PIXELS,
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        JSON_SORT_KEYS=False,
    )
    app.json.sort_keys = False
    # keep key order in pages too: tie-break keys are ordered (Jinja sorts them by default)
    app.jinja_env.policies["json.dumps_kwargs"] = {"sort_keys": False}
    app.config.update(test_config)
    instance = Path(app.instance_path)
    if not app.config.get("SECRET_KEY"):
        app.config["SECRET_KEY"] = _secret_key(instance)
    if not app.config.get("DATABASE"):
        instance.mkdir(parents=True, exist_ok=True)
        app.config["DATABASE"] = str(instance / "kingdomino.sqlite3")
    Store(app.config["DATABASE"]).close()  # create the tables now: fail early on a bad path

    from . import api, pages

    app.register_blueprint(pages.bp)
    app.register_blueprint(api.bp)
    try:
        from . import batch
    except ImportError:  # the batch page is optional: the rest works without it
        batch = None
    if batch is not None and getattr(batch, "bp", None) is not None:
        app.register_blueprint(batch.bp)

    app.before_request(security.check_csrf)
    app.teardown_appcontext(_close_store)
    app.jinja_env.globals["csrf_token"] = security.csrf_token
    app.jinja_env.globals["has_batch"] = "batch" in app.blueprints
    app.jinja_env.globals["rules_title"] = _rules_title

    @app.after_request
    def _headers(resp):
        resp.headers.setdefault("X-Content-Type-Options", "nosniff")
        resp.headers.setdefault("X-Frame-Options", "DENY")
        resp.headers.setdefault("Referrer-Policy", "same-origin")
        resp.headers.setdefault(
            "Content-Security-Policy",
            "default-src 'self'; img-src 'self' data: blob:; style-src 'self'; "
            "script-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'")
        return resp

    @app.errorhandler(HTTPException)
    def _http_error(exc: HTTPException):
        message = exc.description or exc.name
        if exc.code == 413:
            limit = app.config["MAX_CONTENT_LENGTH"] // (1024 * 1024)
            message = f"the upload is too large: at most {limit} MB; send a smaller photo"
        if request.path.startswith("/api/") or request.accept_mimetypes.best == "application/json":
            return jsonify(error=message), exc.code
        return render_template("error.html", code=exc.code, name=exc.name,
                               message=message), exc.code

    @app.errorhandler(Exception)
    def _server_error(exc: Exception):  # a bug of ours: log it, answer without a traceback
        app.logger.exception("unexpected error on %s", request.path)
        message = "something went wrong on the server; the error was logged"
        if request.path.startswith("/api/"):
            return jsonify(error=message), 500
        return render_template("error.html", code=500, name="Server error", message=message), 500

    return app


def serve(host: str = "127.0.0.1", port: int = 5000, db: str | None = None) -> int:
    """Run the app under waitress (a production WSGI server), debug off. Returns an exit code."""
    import waitress

    config = {"DEBUG": False, "INSTANCE_PATH": os.path.join(os.getcwd(), "instance")}
    config["DATABASE"] = os.path.abspath(db or DEFAULT_DB)
    app = create_app(config)
    print(f"kingdomino: serving on http://{host}:{port}/  (store: {app.config['DATABASE']}; "
          "Ctrl+C stops)", flush=True)
    try:
        # waitress buffers a body before the app sees it: cap it well above the app's own limit
        # (which answers 413 as JSON) so absurd uploads are cut off early
        waitress.serve(app, host=host, port=port, threads=4,
                       max_request_body_size=4 * app.config["MAX_CONTENT_LENGTH"])
    except KeyboardInterrupt:
        return 0
    except OSError as exc:
        print(f"kingdomino: error: cannot listen on {host}:{port}: {exc.strerror or exc}",
              flush=True)
        return 1
    return 0
